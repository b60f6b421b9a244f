# Writes tests/compiler/bad/*.csl: each case's error position is marked with @@ in its source
# (removed here), the message substring is written by hand.
import os
out = "/work/main/tests/compiler/bad"
LAY = "layout {\n  @set_rectangle(1, 1);\n}\n"
cases = {
# --- lexer / parser (layout files) ---
"lex_bad_char": ("unexpected character '$'", False, "const x = 1;\nconst y = @@$;\n" + LAY),
"lex_unterminated_string": ("unterminated string literal", False, "const s = @@\"abc;\n" + LAY),
"lex_bad_escape": ("invalid escape sequence", False, "const s = \"a@@\\qb\";\n" + LAY),
"lex_bad_number": ("malformed number", False, "const n = @@12ab;\n" + LAY),
"lex_huge_int": ("does not fit in 64 bits", False, "const n = @@123456789012345678901234;\n" + LAY),
"parse_missing_semicolon": ("expected ';'", False, "const a = 1\n@@const b = 2;\n" + LAY),
"parse_missing_expr": ("expected an expression", False, "const a = @@;\n" + LAY),
"parse_no_return_type": ("return type", False, "fn f() @@{ }\n" + LAY),
"parse_param_in_fn": ("only allowed at the top level", False, "fn f() void {\n  @@param x: i16;\n}\n" + LAY),
"parse_chained_compare": ("cannot be chained", False, "const a = 1 < 2 @@< 3;\n" + LAY),
"parse_stray_statement": ("expected a declaration", False, "@@x = 1;\n" + LAY),
"parse_const_without_value": ("expected '='", False, "const a: i16@@;\n" + LAY),
"parse_unclosed_block": ("expected '}'", False, "fn f() void {\n  return;\n@@"),
"parse_for_without_capture": ("before the loop variable", False, "fn f() void {\n  for (@range(i16, 4)) @@{ }\n}\n" + LAY),
"parse_mixed_struct": ("expected '.' before a field name", False, "const s = .{ .a = 1, @@2 };\n" + LAY),
"parse_tensor_extents": ("index names but", False, "const d = @@|i, j|{4} -> A[i];\n" + LAY),
"parse_fn_in_fn": ("top level of a file", False, "fn f() void {\n  @@fn g() void {}\n}\n" + LAY),
"comptime_if_expr_no_else": ("has no 'else' branch", False, "const a = @@if (false) 1;\n" + LAY),
# --- layout evaluation ---
"comptime_assign_out_of_bounds": ("index 2 is out of bounds (0..1)", False, "comptime {\n  var t = @zeros([2]i32);\n  t[@@2] = 1;\n}\n" + LAY),
"comptime_assign_const_field": ("cannot assign to constant 's'", False, "comptime {\n  const s = .{ .a = 1 };\n  @@s.a = 2;\n}\n" + LAY),
"layout_missing": ("no 'layout { ... }' block", False, "@@const a = 1;\n"),
"layout_two_blocks": ("a second layout block", False, LAY + "@@layout {\n}\n"),
"layout_no_rectangle": ("never calls @set_rectangle", False, "@@layout {\n}\n"),
"layout_tile_outside": ("outside the rectangle", False, "layout {\n  @set_rectangle(2, 1);\n  @set_tile_code(@@2, 0, \"pe.csl\", .{});\n}\n"),
"layout_rect_twice": ("called twice", False, "layout {\n  @set_rectangle(1, 1);\n  @@@set_rectangle(1, 1);\n}\n"),
"layout_missing_file": ("not found", False, "layout {\n  @set_rectangle(1, 1);\n  @set_tile_code(0, 0, @@\"nowhere.csl\", .{});\n}\n"),
"layout_reserved_color": ("reserved by wsemu's memcpy", False, "layout {\n  @set_rectangle(1, 1);\n  @set_color_config(0, 0, @@@get_color(22), .{ .routes = .{ .rx = .{WEST}, .tx = .{RAMP} } });\n}\n"),
"layout_bad_color": ("out of range (0..23)", False, "const c = @get_color(@@24);\n" + LAY),
"layout_counter_filter_no_limit": ("a counter filter needs .limit1 and .max_counter", False, "layout {\n  @set_rectangle(2, 1);\n  @set_color_config(1, 0, @get_color(3), @@.{ .routes = .{ .rx = .{ WEST }, .tx = .{ RAMP } }, .filter = .{ .kind = .{ .counter = true }, .max_counter = 1 } });\n}\n"),
"layout_export_unknown": ("'y' is exported, but PE (0, 0) has no program", False, "layout {\n  @set_rectangle(1, 1);\n  @@@export_name(\"y\", [*]f32, false);\n}\n"),
"layout_undeclared": ("undeclared identifier 'W'", False, "layout {\n  @set_rectangle(@@W, 1);\n}\n"),
"layout_route_dup_dir": ("lists WEST twice", False, "layout {\n  @set_rectangle(1, 1);\n  @set_color_config(0, 0, @get_color(1), @@.{ .routes = .{ .rx = .{WEST, WEST}, .tx = .{RAMP} } });\n}\n"),
"layout_missing_param": ("param 'M' of layout_missing_param.csl has no value", False, "param M: i16;\nlayout {\n  @set_rectangle(@@M, 1);\n}\n"),
"layout_comptime_assert": ("comptime assertion failed: too small", False, "const n = 3;\ncomptime {\n  @@@comptime_assert(n > 4, \"too small\");\n}\n" + LAY),
"layout_var_at_top": ("variables belong to PE programs", False, "@@var v: i16 = 0;\nconst w = v;\n" + LAY),
"layout_pe_builtin_in_layout": ("belongs in a PE program", False, "fn f() void {}\ncomptime {\n  @@@export_symbol(f);\n}\n" + LAY),
"layout_import_missing": ("standard library module '<nope/nope>' not found", False, "const m = @import_module(@@\"<nope/nope>\");\n" + LAY),
# --- PE programs ---
"pe_undeclared": ("use of undeclared identifier 'q'", True, "fn f() void {\n  var a: i16 = @@q;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_type_mismatch": ("expected type 'i16', found 'f32'", True, "var g: f32 = 1.0;\nfn f() void {\n  var a: i16 = @@g;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_mixed_int_float": ("mix", True, "var g: i16 = 1;\nvar h: f32 = 0.0;\nfn f() void {\n  h = g @@+ 1.5;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_assign_const": ("cannot assign to constant 'k'", True, "fn f() void {\n  for (@range(i16, 4)) |k| {\n    @@k = 2;\n  }\n}\ncomptime { @export_symbol(f); }\n"),
"pe_index_out_of_bounds": ("out of bounds", True, "var a: [4]f32;\nfn f() void {\n  a[@@4] = 1.0;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_index_single_pointer": ("a single-item pointer", True, "var a: [4]u16;\nfn get(p: *u16, i: u16) u16 {\n  return p@@[i];\n}\nfn f() void { a[1] = get(&a[0], 1); }\ncomptime { @export_symbol(f); }\n"),
"pe_tensor_out_of_range": ("outside a PE's 48 KiB of memory", True, "var a: [8]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = @@|i|{9000} -> a[2 * i] });\nfn f() void { @fmovs(d, d); }\ncomptime { @export_symbol(f); }\n"),
"pe_unsupported_builtin": ("unsupported builtin '@frobnicate'", True, "fn f() void {\n  @@@frobnicate(1);\n}\ncomptime { @export_symbol(f); }\n"),
"pe_vector_arity": ("@fadds takes 3 operands", True, "var a: [4]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\nfn f() void {\n  @@@fadds(d, d);\n}\ncomptime { @export_symbol(f); }\n"),
"pe_vector_dest_scalar": ("destination of @fmovs must be a DSD", True, "var a: [4]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\nfn f() void {\n  @fmovs(@@1.0, d);\n}\ncomptime { @export_symbol(f); }\n"),
"pe_wrong_arg_count": ("takes 1 argument, 2 given", True, "fn g(x: i16) void { }\nfn f() void {\n  @@g(1, 2);\n}\ncomptime { @export_symbol(f); }\n"),
"pe_export_twice": ("exported twice", True, "fn f() void { }\ncomptime {\n  @export_symbol(f);\n  @@@export_symbol(f);\n}\n"),
"pe_bind_not_task": ("needs a task", True, "fn f() void { }\ncomptime {\n  @bind_local_task(@@f, @get_local_task_id(9));\n}\n"),
"pe_task_id_range": ("out of range", True, "task t() void { }\ncomptime {\n  @bind_local_task(t, @get_local_task_id(@@40));\n}\n"),
"pe_call_task": ("cannot be called", True, "task t() void { }\nfn f() void {\n  @@t();\n}\ncomptime { @export_symbol(f); }\n"),
"pe_missing_param": ("param 'M' of pe_missing_param.csl has no value", True, "param M: i16;\nvar a: [@@M]f32;\n"),
"pe_shadowing": ("'a' shadows a local of the same name", True, "var a: i16 = 0;\nfn f() void {\n  var a: i16 = 1;\n  {\n    @@var a: i16 = 2;\n  }\n}\ncomptime { @export_symbol(f); }\n"),
"pe_break_outside_loop": ("'break' outside a loop", True, "fn f() void {\n  @@break;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_return_value_void": ("returns void", True, "fn f() void {\n  return @@1;\n}\ncomptime { @export_symbol(f); }\n"),
"pe_comptime_overflow": ("does not fit in i16", True, "const x: i16 = @@40000;\nvar a: [4]f32;\n"),
"pe_division_by_zero": ("division by zero", True, "const x = 4 @@/ 0;\nvar a: [x]f32;\nfn f() void { a[0] = 1.0; }\ncomptime { @export_symbol(f); }\n"),
"pe_dsd_needs_base": ("needs .tensor_access or .base_address", True, "const d = @get_dsd(mem1d_dsd, @@.{ .extent = 4 });\nfn f() void { @fmovs(d, d); }\ncomptime { @export_symbol(f); }\n"),
"pe_element_address_out_of_bounds": ("index 3 is out of bounds for the array 'a' points into (0..2)", True, "var a: [4]u16;\nconst q: [*]u16 = &a[1];\nconst r = &q[@@3];\nfn f() void { r.* = 1; }\ncomptime { @export_symbol(f); }\n"),
"pe_element_address_single_pointer": ("a single-item pointer (*u16) has no elements", True, "var a: [4]u16;\nfn f(p: *u16) void {\n  const e = &@@p[1];\n  e.* = 2;\n}\nfn g() void { f(&a[0]); }\ncomptime { @export_symbol(g); }\n"),
"pe_element_address_runtime_pointer": ("'&xp[i]' is only known at run time", True, "var x: [8]f32;\nvar xp: [*]f32 = &x;\nconst d = @get_dsd(mem1d_dsd, .{ .base_address = @@&xp[1], .extent = 4 });\nfn f() void { @fadds(d, d, 1.0); }\ncomptime { @export_symbol(f); }\n"),
"pe_dsd_stride_range": (".stride 40000 does not fit a DSD's 16-bit stride", True, "var x: [8]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .base_address = &x, .extent = 4, .stride = @@40000 });\nfn f() void { @fadds(d, d, 1.0); }\ncomptime { @export_symbol(f); }\n"),
"pe_async_option": (".activate, .unblock, .ut_id and .priority need .async = true", True, "var a: [4]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\ntask t() void { }\nfn f() void {\n  @fmovs(d, d, @@.{ .activate = @get_local_task_id(9) });\n}\ncomptime { @export_symbol(f); @bind_local_task(t, @get_local_task_id(9)); }\n"),
"pe_priority_level": (".priority needs one of .{ .high = true }, .{ .medium = true }, .{ .low = true }", True, "var a: [4]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\nfn f() void {\n  @fmovs(d, d, @@.{ .async = true, .priority = .{ .urgent = true } });\n}\ncomptime { @export_symbol(f); }\n"),
"pe_export_data_no_name": ("needs the host name", True, "var a: [4]f32;\nconst p: [*]f32 = &a;\ncomptime {\n  @@@export_symbol(p);\n}\n"),
"pe_activate_unbound": ("local task id 12 is activated at comptime but no task is bound to it", True, "comptime {\n  @@@activate(@get_local_task_id(12));\n}\n"),
"pe_activate_data_task": ("@activate at comptime needs a local task id", True, "const c = @get_color(3);\ncomptime {\n  @activate(@@c);\n}\n"),
"pe_self_dependency": ("depends on its own value", True, "const a = b + 1;\nconst b = @@a;\nvar x: [a]f32;\n"),
"pe_too_many_fifos": ("more than 32 FIFO and @get_dsr descriptors in one PE program", True,
   "".join(f"var b{k}: [2]f32;\nconst q{k} = @allocate_fifo(b{k});\n" for k in range(32)) +
   "var b32: [2]f32;\nconst q32 = @@@allocate_fifo(b32);\n" +
   "var c: [8]f32;\n" + "".join(f"const m{j} = @get_dsd(mem1d_dsd, .{{ .tensor_access = |i|{{2}} -> c[i + {2 * j}] }});\n" for j in range(4)) + "fn f() void {\n" +
   "".join(f"  @fmovs(q{k}, 1.0);\n" for k in range(33)) + "".join(f"  @fmovs(m{j}, 1.0);\n" for j in range(4)) +
   "}\ncomptime { @export_symbol(f); }\n"),
"pe_map_over_dsr": ("unsupported: @map over a DSD register of @get_dsr", True,
   "const r = @get_dsr(dsr_dest, 1);\nfn f(v: f32) void { }\nfn g() void {\n  @map(f, @@r);\n}\ncomptime { @export_symbol(g); }\n"),
"pe_scalar_destination_type": ("the scalar destination of @fadds must be a 32-bit float, not i16", True,
   "var a: [4]f32;\nvar s: i16 = 0;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\nfn f() void {\n  @fadds(@@&s, s, d);\n}\ncomptime { @export_symbol(f); }\n"),
"pe_index_without_offset_dsd": ("needs a DSD operand made with .wavelet_index_offset = true", True,
   "var a: [4]f32;\nconst d = @get_dsd(mem1d_dsd, .{ .tensor_access = |i|{4} -> a[i] });\nfn f() void {\n  @fadds(d, d, d, .{ .index = @@2 });\n}\ncomptime { @export_symbol(f); }\n"),
"pe_i8_array": ("unsupported: arrays of i8 (wsemu keeps an 8-bit integer in a 16-bit word; use an array of i16)", True,
   "@@var a: [4]i8;\nfn f() void { a[0] = 1; }\ncomptime { @export_symbol(f); }\n"),
"pe_dsd_u8_elements": ("unsupported: DSD elements of u8 (wavelets and DSDs move 16 or 32 bits)", True,
   "const d = @get_dsd(fabin_dsd, .{ .extent = 4, .fabric_color = @get_color(3), .input_queue = @get_input_queue(2), .data_type = @@u8 });\nvar x: u16 = 0;\nfn f() void { @mov16(&x, d); }\ncomptime { @export_symbol(f); }\n"),
}
import_cases = {
"import_error_in_module": ("use of undeclared identifier 'nothing'", "import_error_lib.csl",
   "const m = @import_module(\"import_error_lib.csl\");\nconst v = m.value;\n" + LAY,
   "// a module of the import_error_in_module case (not a test case itself: .cslm)\nconst value = @@nothing;\n"),
}
os.makedirs(out, exist_ok=True)
for f in os.listdir(out):
    if f.endswith(".csl") or f.endswith(".cslm"): os.remove(os.path.join(out, f))
def place(src):
    i = src.index("@@")
    before = src[:i]
    line = before.count("\n") + 1
    col = i - (before.rfind("\n") + 1) + 1
    return src.replace("@@", "", 1), line, col
for name, (msg, pe, src) in cases.items():
    header = 2 if pe else 1
    body, line, col = place(src)
    text = f"// expect: {line + header}:{col}: {msg}\n" + ("// as: pe\n" if pe else "") + body
    open(os.path.join(out, name + ".csl"), "w").write(text)
t = open(os.path.join(out, "layout_missing.csl")).read().split("\n", 1)
open(os.path.join(out, "layout_missing.csl"), "w").write("// expect: 1:1: no 'layout { ... }' block\n" + t[1])
print(len(cases), "cases")
