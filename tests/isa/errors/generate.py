# Writes the error corpus (tests/isa/errors/*.wsa): run `python3 generate.py` after editing a case.
# Columns are computed from the text named in each case, so the expectations stay exact.
# Generates the error corpus. Each case: name, description, program lines, (line index in the
# program, text whose first character is the error column, occurrence), fragment[, args].
import os
cases = [
 ("unknown_mnemonic", "an instruction that does not exist", ["start:", "        fmadd d0, d1, d2, r1"], (2, "fmadd"), "unknown instruction 'fmadd'"),
 ("bad_operand_kind", "a descriptor where a scalar register is required", ["        add r1, d2, r3"], (1, "d2"), "must be a scalar register r0..r15"),
 ("undefined_label", "a branch to a label that is never defined", ["        jmp nowhere"], (1, "nowhere"), "undefined symbol 'nowhere'"),
 ("duplicate_label", "the same label twice", ["loop:   nop", "loop:   exit"], (2, "loop"), "'loop' is already defined at"),
 ("imm_out_of_range", "a 16-bit immediate too large", ["        addi r1, r1, 40000"], (1, "40000"), "out of range: 40000 (-32768..32767)"),
 ("unterminated_string", "a string without its closing quote", ["        dprint \"hello"], (1, "\""), "unterminated string"),
 ("unknown_directive", "a directive that does not exist", [".bss 4"], (1, ".bss"), "unknown directive '.bss'"),
 ("missing_param", "a .param without --param", [".param N", ".data", "v: .f32 [N]"], (1, "N"), "parameter 'N' has no value (pass --param N=..."),
 ("bad_dsd_kind", "an unknown descriptor kind", [".data", "buf: .f32 [4]", ".dsd x = mem2d(buf, 4)"], (3, "mem2d"), "unknown descriptor kind 'mem2d'"),
 ("bad_task_kind", "a task kind that does not exist", [".task t, remote, 3", "        exit"], (1, "remote"), "expected a task kind (data, local or control)"),
 ("too_few_operands", "an instruction missing an operand", ["        add r1, r2"], (1, None, 19), "add expects 3 operands (reg, reg, reg), found 2"),
 ("too_many_operands", "an instruction with an extra operand", ["        mov r1, r2, r3"], (1, "r3"), "too many operands: mov takes 2"),
 ("async_on_scalar", ".async on a scalar instruction", ["        add.async r1, r2, r3"], (1, "add.async"), "'add' is not a vector operation"),
 ("option_without_async", "a completion option on a synchronous operation", ["        fadds d0, d1, d2, activate=3"], (1, "activate"), "need the asynchronous form: fadds.async"),
 ("bad_priority", "a microthread priority that does not exist", ["        mov32.async d0, d1, priority=urgent"], (1, "urgent"), "priority= takes high, medium or low, found 'urgent'"),
 ("bad_microthread", "a microthread id out of range", ["        fadds.async d0, d1, d2, ut=9"], (1, "9"), "microthread 9 is outside 0..7"),
 ("bad_register", "a register number that does not exist", ["        mov r16, r1"], (1, "r16"), "must be a scalar register r0..r15, not 'r16'"),
 ("dsr_out_of_range", "a descriptor register number that does not exist", ["        dsdlen d48, 4"], (1, "d48"), "must be a descriptor register d0..d47 or a .dsd name, not 'd48'"),
 ("division_by_zero", "a constant divided by zero", [".equ X, 4 / (2 - 2)", "        li r1, X"], (1, "/"), "division by zero"),
 ("float_in_integer", "a float where an integer is required", ["        addi r1, r1, 1.5"], (1, "1.5"), "expected an integer, not the floating-point value 1.5"),
 ("data_value_range", "a data value too large for its type", [".data", "t: .i16 1, 40000"], (2, "40000"), "value 40000 does not fit in .i16"),
 ("unterminated_paren", "a missing closing parenthesis", ["        li r1, (1 + 2"], (1, None, 22), "expected ')', found the end of the line"),
 ("bad_number", "a malformed number", ["        li r1, 12abc"], (1, "12abc"), "bad number '12abc'"),
 ("data_task_color_on_wse3", "a WSE-2 style data task on WSE-3", [".arch wse3", ".task t, data, color 3", "        exit"], (2, "color"), "on wse3 a data task is triggered by an input queue"),
 ("local_task_range_wse3", "a WSE-3 local task id below 8", [".arch wse3", ".task t, local, 3", "        exit"], (2, "3"), "local task id (wse3) 3 is outside 8..30"),
 ("duplicate_task_id", "two tasks with the same id", [".task a, local, 10", "        exit", ".task b, local, 10", "        exit"], (3, "b"), "task id 10 is already used by task 'a'"),
 ("label_without_data", "a data label followed by no data", [".data", "lonely:", ".code", "        exit"], (2, "lonely"), "label 'lonely' in the .data section is not followed by data"),
 ("instruction_in_data", "an instruction in the .data section", [".data", "        nop"], (2, "nop"), "instruction 'nop' in the .data section"),
 ("export_undefined", "exporting a name that does not exist", [".export ghost"], (1, "ghost"), "cannot export 'ghost': it is not defined"),
 ("equ_cycle", "constants defined through each other", [".equ A, B + 1", ".equ B, A", "        li r1, A"], (2, "A"), "constant 'A' is defined in terms of itself"),
 ("bad_escape", "an unknown escape in a string", ["        dprint \"a\\qb\""], (1, "\\q"), "unknown escape '\\q'"),
 ("data_symbol_as_label", "a branch to a data symbol", [".data", "buf: .f32 [2]", ".code", "        jmp buf"], (4, "buf"), "'buf' is a data symbol, not a code label"),
 ("dsd_register_taken", "two descriptors in the same register", [".data", "b: .f32 [4]", ".dsd x = mem1d(b, 4) @ d3", ".dsd y = mem1d(b, 2) @ d3"], (4, "d3"), "d3 is already given to descriptor 'x'"),
 ("oversized_data", "more data than the address space", [".data", "big: .f32 [20000]"], (2, "20000"), "element count 20000 is outside 0..16384"),
 ("bad_arch", "an unknown architecture", [".arch wse4"], (1, "wse4"), ".arch needs wse2 or wse3, found 'wse4'"),
 ("wse2_output_queue", "an output queue WSE-2 does not have", [".arch wse2", ".oqinit 6, 1"], (2, "6"), "output queue 6 is outside 0..5"),
 ("bad_mem_operand", "a descriptor as a memory base", ["        ld32 r1, [d1]"], (1, "d1"), "a memory operand takes a scalar base register"),
 ("unexpected_char", "a character the language does not use", ["        li r1, 5 # not a comment"], (1, "#"), "unexpected character '#'"),
 ("sizeof_not_data", "sizeof of a code label", ["start:  li r1, sizeof(start)"], (1, "start", 2), "sizeof() needs a data symbol"),
 ("forward_size", "a size that needs a later symbol", [".data", "a: .f32 [sizeof(b)]", "b: .f32 [4]"], (2, "sizeof"), "must be known before the data is laid out"),
 ("huge_number", "an integer literal beyond 64 bits", ["        li r1, 123456789012345678901234"], (1, "1234"), "does not fit in 64 bits"),
 ("deep_nesting", "an expression nested 250 deep", ["        li r1, " + "(" * 250 + "1" + ")" * 250], (1, None, 16 + 200), "expression nested too deeply"),
 ("redefine_builtin", "redefining a builtin constant", [".equ TEARDOWN, 5"], (1, "TEARDOWN"), "'TEARDOWN' is a builtin constant"),
 ("ctl_cmd_range", "a router command that does not exist", ["        li r1, ctl_cmds(4)"], (1, "4"), "ctl_cmds(): command 4 is not"),
 ("ctl_entry_no_task", "a control wavelet for task 31, the id that names none", ["        li r1, ctl_entry(31, 0)"], (1, "31"), "ctl_entry(): task id 31 is outside 0..63 or is 31 (no task)"),
 ("task_without_code", "a task declared in .data with no label", [".data", ".task t, local, 3"], (2, "t,"), "task 't' has no code"),
 ("wrong_option_value", "a fabout option out of range", [".dsd o = fabout(3, 1, 4, control=2)"], (1, "2)"), "control 2 is outside 0..1"),
 ("reserved_name", "a label named like a register", ["r3:     nop"], (1, "r3"), "'r3' is a register name"),
 ("trailing_junk", "text after a complete directive", [".code extra"], (1, "extra"), "unexpected 'extra' after .code"),
]
os.chdir(os.path.dirname(os.path.abspath(__file__)))
for case in cases:
    name, desc, prog, loc, frag = case[:5]
    args = case[5] if len(case) > 5 else None
    header = [f"; {desc}", None]
    if args: header.append(f"; args: {args}")
    lines = header + prog
    li = loc[0] - 1 + len(header)
    if loc[1] is None:
        col = loc[2]
    else:
        occ = loc[2] if len(loc) > 2 else 1
        idx = -1
        for _ in range(occ):
            idx = lines[li].index(loc[1], idx + 1)
        col = idx + 1
    lines[1] = f"; expect: {li + 1}:{col}: {frag}"
    open(f"{name}.wsa", "w").write("\n".join(lines) + "\n")
# Files that need more than text lines.
open("binary_garbage.wsa", "wb").write(b"; a binary file given as a source\n; expect: 3:5: binary data (a NUL byte) in the source\n\x7fELF\x00\x02\x01\xff\xfe\n")
open("include_cycle.wsa", "w").write("; a file that includes itself through two others\n; expect: include_cycle_b.inc:2:10: include cycle: include_cycle.wsa -> include_cycle_a.inc -> include_cycle_b.inc -> include_cycle.wsa\n.include \"include_cycle_a.inc\"\n")
open("include_cycle_a.inc", "w").write("; part of include_cycle.wsa\n.include \"include_cycle_b.inc\"\n")
open("include_cycle_b.inc", "w").write("; part of include_cycle.wsa\n.include \"include_cycle.wsa\"\n")
open("include_missing.wsa", "w").write("; an include file that does not exist\n; expect: 3:10: cannot find include file 'no_such_file.inc'\n.include \"no_such_file.inc\"\n")
print(len(cases) + 3)
