// The assembler against hand-worked expectations: layout, expressions, data bytes, directives.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "isa/assembler.hpp"
#include "isa/disassembler.hpp"
#include "tests/isa/test_support.hpp"

namespace wsemu::isa {
namespace {

using test::assemble_ok;

uint32_t u32_at(const ObjectImage& o, uint32_t address) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) {
    const size_t at = address - o.data_base + static_cast<size_t>(i);
    if (at < o.data_init.size()) v |= uint32_t{o.data_init[at]} << (8 * i);
  }
  return v;
}

uint16_t u16_at(const ObjectImage& o, uint32_t address) { return static_cast<uint16_t>(u32_at(o, address)); }

Instruction decoded(const ObjectImage& o, size_t pc) {
  std::optional<Instruction> i = decode(o.code.at(pc));
  EXPECT_TRUE(i.has_value());
  return i.value_or(Instruction{});
}

TEST(Assembler, LabelsBranchesAndDataFollowTheCode) {
  const ObjectImage o = assemble_ok(R"(
start:  li   r1, 3
loop:   addi r1, r1, -1
        bne  r1, r0, loop
        jmp  start
        .data
a:      .i16 1
b:      .f32 2.0
)");
  ASSERT_EQ(o.code.size(), 4u);
  EXPECT_EQ(o.data_base, 32u);  // 4 instructions of 8 bytes
  EXPECT_EQ(decoded(o, 2).operands[2].value, 1);  // loop
  EXPECT_EQ(decoded(o, 3).operands[0].value, 0);  // start
  ASSERT_EQ(o.symbols.size(), 2u);
  EXPECT_EQ(o.symbols[0].address, 32u);
  EXPECT_EQ(o.symbols[1].address, 36u);  // .f32 aligned to 4 after a 2-byte i16
  EXPECT_EQ(o.data_size, 8u);
  EXPECT_EQ(u16_at(o, 32), 1u);
  EXPECT_EQ(u32_at(o, 36), 0x40000000u);  // 2.0f
  ASSERT_EQ(o.functions.size(), 2u);
  EXPECT_EQ(o.functions[0].name, "start");
  EXPECT_EQ(o.functions[1].entry, 1u);
}

TEST(Assembler, ExpressionsFollowCPrecedence) {
  const ObjectImage o = assemble_ok(R"(
.equ A, 1 + 2 * 3
.equ B, (1 + 2) * 3
.equ C, ~0xF & 0xFF
.equ D, 1 << 4 | 1
.equ E, -7 / 2
.equ F, -7 % 2
.equ G, 3 > 2 ? 10 : 20
.equ H, (2 == 3) + (2 != 3) * 2 + (1 <= 1) * 4
.equ I, FWD + 1
.equ FWD, 41
        .data
v:      .i32 A, B, C, D, E, F, G, H, I
)");
  const uint32_t base = o.symbols[0].address;
  const int32_t expect[] = {7, 9, 0xF0, 17, -3, -1, 10, 6, 42};
  for (int i = 0; i < 9; ++i) EXPECT_EQ(static_cast<int32_t>(u32_at(o, base + 4 * i)), expect[i]) << i;
}

TEST(Assembler, ControlWaveletBuiltinsMatchThePayloadLayout) {
  const ObjectImage o = assemble_ok(R"(
        li r1, ctl_entry(5, 0xBEEF)
        li r2, ctl_cmds(SWITCH_ADV, NOP, TEARDOWN, SWITCH_RST)
        li r3, ctl_entry(t, 1, TEARDOWN)
        li r4, ctl_cmds(NOP, NOP, NOP, NOP, NOP, NOP, NOP, SWITCH_ADV)
.task t, local, 12
        exit
)");
  // The hardware's layout (isa/README.md): data in [15:0], task in [21:16] (31: none), slot 0 in
  // 24:22, slot 1 in 27:25, slot 2's command in 29:28, slots 3..7 in 3:1 .. 15:13.
  EXPECT_EQ(decoded(o, 0).operands[1].value, 0x0005BEEF);
  EXPECT_EQ(decoded(o, 1).operands[1].value, (1 << 22) | (3 << 28) | (2 << 1) | (31 << 16));  // 0x305F0004
  EXPECT_EQ(decoded(o, 2).operands[1].value, 1 | (12 << 16) | (3 << 22));                     // 0x00CC0001
  EXPECT_EQ(decoded(o, 3).operands[1].value, (1 << 13) | (31 << 16));                         // 0x001F2000
}

TEST(Assembler, DataDirectivesWriteLittleEndianValues) {
  const ObjectImage o = assemble_ok(R"(
        .data
h:      .f16 1.0, -2.5, 65504, 0.1
i:      .i16 -2
u:      .u32 0xDEADBEEF
f:      .f32 -1, 0.5, bits(0x7FC00001)
z:      .f32 [3]
t:      .u16 1, 2,
             3
p:      .u32 h, sizeof(f), t - h
)");
  const Symbol* h = o.find_symbol("h");
  ASSERT_NE(h, nullptr);
  EXPECT_EQ(u16_at(o, h->address), 0x3C00u);
  EXPECT_EQ(u16_at(o, h->address + 2), 0xC100u);
  EXPECT_EQ(u16_at(o, h->address + 4), 0x7BFFu);
  EXPECT_EQ(u16_at(o, h->address + 6), 0x2E66u);  // 0.1 rounded to nearest fp16
  EXPECT_EQ(u16_at(o, o.find_symbol("i")->address), 0xFFFEu);
  EXPECT_EQ(u32_at(o, o.find_symbol("u")->address), 0xDEADBEEFu);
  const uint32_t f = o.find_symbol("f")->address;
  EXPECT_EQ(u32_at(o, f), 0xBF800000u);
  EXPECT_EQ(u32_at(o, f + 4), 0x3F000000u);
  EXPECT_EQ(u32_at(o, f + 8), 0x7FC00001u);
  EXPECT_EQ(o.find_symbol("z")->count, 3u);
  const Symbol* t = o.find_symbol("t");
  EXPECT_EQ(t->count, 3u);
  EXPECT_EQ(u16_at(o, t->address + 4), 3u);
  const uint32_t p = o.find_symbol("p")->address;
  EXPECT_EQ(u32_at(o, p), h->address);
  EXPECT_EQ(u32_at(o, p + 4), 12u);
  EXPECT_EQ(u32_at(o, p + 8), t->address - h->address);
  // The initialised part ends at the last non-zero byte; data_size covers everything.
  EXPECT_EQ(o.data_size, p + 12 - o.data_base);
  EXPECT_EQ(o.data_init.size(), o.data_size - 3);  // the last value (t - h = 40) has 3 zero bytes
}

TEST(Assembler, FloatImmediateIsTheFp32BitPattern) {
  const ObjectImage o = assemble_ok("li r1, 1.5\nli r2, -0.0\nli r3, -1\n");
  EXPECT_EQ(decoded(o, 0).operands[1].value, 0x3FC00000);
  EXPECT_EQ(decoded(o, 1).operands[1].value, 0x80000000);
  EXPECT_EQ(decoded(o, 2).operands[1].value, 0xFFFFFFFF);
}

TEST(Assembler, ParametersComeFromTheOptions) {
  AssembleOptions opt;
  opt.params = {{"N", 12}, {"M", -3}};
  const ObjectImage o = assemble_ok(".param N, M\n.data\nv: .f32 [N * 2]\nw: .i32 M\n", opt);
  EXPECT_EQ(o.find_symbol("v")->count, 24u);
  EXPECT_EQ(static_cast<int32_t>(u32_at(o, o.find_symbol("w")->address)), -3);
}

TEST(Assembler, DescriptorsTakeRegistersInOrderAroundExplicitOnes) {
  const ObjectImage o = assemble_ok(R"(
.data
buf:  .f16 [16]
w:    .f32 [8]
.dsd a = mem1d(buf, 16)
.dsd b = mem1d(w + 4, 4, 2) @ d0
.dsd c = mem4d(w, [2, 4], [4, 1])
.dsd e = fabout(3, 1, 10, control=1, index=5, advance_switch=1)
.dsd f = fabin.16(2, 4, 7, on_control=unblock:9)
.dsd g = fifo(w, 8, activate_push=11)
.dsd h = mem1d.32(buf, 8)
)");
  ASSERT_EQ(o.descriptors.size(), 7u);
  const Descriptor& a = o.descriptors[0].value;
  EXPECT_EQ(o.descriptors[0].dsr, 1);  // d0 is taken explicitly by b
  EXPECT_EQ(a.kind, DsdKind::MEM1D);
  EXPECT_EQ(a.elem_bits, 16);  // from the symbol's type
  EXPECT_EQ(a.base, o.find_symbol("buf")->address);
  EXPECT_EQ(a.length, 16u);
  EXPECT_EQ(a.stride, 1);
  const Descriptor& b = o.descriptors[1].value;
  EXPECT_EQ(o.descriptors[1].dsr, 0);
  EXPECT_EQ(b.base, o.find_symbol("w")->address + 4);
  EXPECT_EQ(b.stride, 2);
  EXPECT_EQ(b.elem_bits, 32);
  const Descriptor& c = o.descriptors[2].value;
  EXPECT_EQ(o.descriptors[2].dsr, 2);
  EXPECT_EQ(c.extents, (std::array<uint16_t, 4>{2, 4, 1, 1}));
  EXPECT_EQ(c.strides, (std::array<int16_t, 4>{4, 1, 0, 0}));
  const Descriptor& e = o.descriptors[3].value;
  EXPECT_EQ(e.kind, DsdKind::FABOUT);
  EXPECT_EQ(e.color, 3);
  EXPECT_EQ(e.queue, 1);
  EXPECT_EQ(e.length, 10u);
  EXPECT_TRUE(e.control);
  EXPECT_EQ(e.index, 5);
  EXPECT_TRUE(e.advance_switch);
  const Descriptor& f = o.descriptors[4].value;
  EXPECT_EQ(f.elem_bits, 16);
  EXPECT_EQ(f.on_control, OnControl::UNBLOCK);
  EXPECT_EQ(f.on_control_task, 9);
  EXPECT_EQ(o.descriptors[5].value.activate_on_push, 11);
  EXPECT_EQ(o.descriptors[5].value.activate_on_pop, -1);
  EXPECT_EQ(o.descriptors[6].value.elem_bits, 32);  // the suffix overrides the symbol's width
}

TEST(Assembler, TasksQueuesExportsAndStrings) {
  const ObjectImage o = assemble_ok(R"(
.arch wse3
.iqinit 2, 7
.oqinit 6, 8
.export go, out
.data
out: .f32 [4]
.code
go:     dprint "hi"
        dprint "there"
        dprint "hi"
        activate worker
        ret
.task rx, data, queue 2
        exit
.task worker, local, 20, blocked
        exit
.task ctl, control, 63
        fadds.async d1, d2, d3, ut=3, activate=worker
        mov32.async d1, d2, priority=medium
        mov16.async d1, d2, unblock=worker, priority=high
)");
  EXPECT_EQ(o.arch, "wse3");
  ASSERT_EQ(o.tasks.size(), 3u);
  EXPECT_EQ(o.tasks[0].kind, TaskKind::DATA);
  EXPECT_EQ(o.tasks[0].id, 2);
  EXPECT_EQ(o.tasks[0].trigger, 2);
  EXPECT_TRUE(o.tasks[0].trigger_is_queue);
  EXPECT_EQ(o.tasks[0].entry, 5u);
  EXPECT_EQ(o.tasks[1].id, 20);
  EXPECT_TRUE(o.tasks[1].starts_blocked);
  EXPECT_EQ(o.tasks[1].entry, 6u);
  EXPECT_EQ(o.tasks[2].kind, TaskKind::CONTROL);
  EXPECT_EQ(decoded(o, 3).operands[0].value, 20);  // activate worker -> its id
  const Instruction f = decoded(o, 7);
  EXPECT_EQ(f.async, (AsyncSpec{true, 3, OnDone::ACTIVATE, 20}));
  // The SDK's microthread priority, low when not given, in any order among the options.
  EXPECT_EQ(f.async.priority, Priority::LOW);
  EXPECT_EQ(decoded(o, 8).async, (AsyncSpec{true, 0, OnDone::NONE, 0, Priority::MEDIUM}));
  EXPECT_EQ(decoded(o, 9).async, (AsyncSpec{true, 0, OnDone::UNBLOCK, 20, Priority::HIGH}));
  EXPECT_EQ(o.queues, (std::vector<QueueBinding>{{false, 2, 7}, {true, 6, 8}}));
  EXPECT_EQ(o.strings, (std::vector<std::string>{"hi", "there"}));
  EXPECT_EQ(decoded(o, 2).operands[0].value, 0);
  EXPECT_TRUE(o.find_symbol("out")->exported);
  EXPECT_TRUE(o.find_function("go")->exported);
  EXPECT_FALSE(o.find_function("rx")->exported);
}

// `activated` (CSL's comptime @activate): local tasks only, with or without `blocked`, and the
// disassembler writes it back.
TEST(Assembler, TaskFlagsActivatedAndBlocked) {
  const ObjectImage o = assemble_ok(".task a, local, 9, activated\n        exit\n.task b, local, 10, activated, blocked\n        exit\n");
  ASSERT_EQ(o.tasks.size(), 2u);
  EXPECT_TRUE(o.tasks[0].starts_activated);
  EXPECT_FALSE(o.tasks[0].starts_blocked);
  EXPECT_TRUE(o.tasks[1].starts_activated);
  EXPECT_TRUE(o.tasks[1].starts_blocked);
  EXPECT_NE(disassemble(o).find(".task b, local, 10, blocked, activated"), std::string::npos) << disassemble(o);
  const AssembleResult r = assemble(".task d, data, color 3, activated\n        exit\n", "f.wsa");
  ASSERT_FALSE(r.object);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_EQ(r.errors[0].col, 25);
  EXPECT_NE(r.errors[0].message.find("only a local task starts activated"), std::string::npos) << r.errors[0].message;
}

TEST(Assembler, IncludeIsRelativeToTheIncludingFileThenTheIncludeDirs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wsemu_inc_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(dir / "sub");
  fs::create_directories(dir / "lib");
  std::ofstream(dir / "sub" / "near.inc") << ".equ NEAR, 5\n.include \"far.inc\"\n";
  std::ofstream(dir / "lib" / "far.inc") << ".equ FAR, 7\n";
  AssembleOptions opt;
  opt.include_dirs = {(dir / "lib").string()};
  const ObjectImage o = assemble_ok(".include \"sub/near.inc\"\nli r1, NEAR * FAR\n", opt, (dir / "main.wsa").string());
  EXPECT_EQ(decoded(o, 0).operands[1].value, 35);
  fs::remove_all(dir);
}

// .loc fills the line table: each instruction gets the .loc in force in its own file (an
// .include'd file's code gets none), files are numbered in first use, and the disassembler's
// .loc lines give the same table back.
TEST(Assembler, LocDirectiveFillsTheLineTable) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("wsemu_loc_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  fs::create_directories(dir);
  std::ofstream(dir / "fw.inc") << "nop\n";
  const ObjectImage o = assemble_ok(
      "nop\n.loc \"unused.csl\", 1\n.loc \"pe.csl\", 12, 5\nli r1, 1\nli r2, 2\n.loc \"lib.csl\", 3\nnop\n"
      ".include \"fw.inc\"\nnop\n.loc \"pe.csl\", 14, 1\nnop\n",
      {}, (dir / "main.wsa").string());
  fs::remove_all(dir);
  ASSERT_EQ(o.code.size(), 7u);
  EXPECT_EQ(o.source_files, (std::vector<std::string>{"pe.csl", "lib.csl"}));
  const std::vector<std::string> want = {"", "pe.csl:12:5", "pe.csl:12:5", "lib.csl:3", "", "lib.csl:3", "pe.csl:14:1"};
  for (uint32_t pc = 0; pc < 7; ++pc) EXPECT_EQ(o.source_location(pc), want[pc]) << "pc " << pc;
  const AssembleResult again = assemble(disassemble(o), "again.wsa");
  ASSERT_TRUE(again.object) << test::all_errors(again);
  EXPECT_EQ(again.object->source_files, o.source_files);
  EXPECT_EQ(again.object->source_locations, o.source_locations);
  for (const char* bad : {".loc 12\n", ".loc \"pe.csl\"\n", ".loc \"pe.csl\", 0\n", ".loc \"pe.csl\", 3, 2, 1\n"}) {
    const AssembleResult r = assemble(bad, "bad.wsa");
    EXPECT_FALSE(r.object) << bad;
    ASSERT_FALSE(r.errors.empty()) << bad;
    EXPECT_NE(r.errors[0].message.find(".loc"), std::string::npos) << r.errors[0].to_string();
  }
}

TEST(Assembler, WordDirectiveEmitsTheRawWord) {
  const ObjectImage o = assemble_ok(".word 0x0123456789ABCDEF\n.word -1\n");
  EXPECT_EQ(o.code, (std::vector<uint64_t>{0x0123456789ABCDEFu, ~uint64_t{0}}));
}

TEST(Assembler, ReportsEveryErrorWithPositionAndCaret) {
  const AssembleResult r = assemble("  addd r1, r2\n\tli r1, nowhere\n", "x.wsa");
  ASSERT_FALSE(r.object);
  ASSERT_EQ(r.errors.size(), 2u);
  EXPECT_EQ(r.errors[0].to_string(),
            "x.wsa:1:3: error: unknown instruction 'addd' (did you mean 'add'?)\n  addd r1, r2\n  ^");
  EXPECT_EQ(r.errors[1].line, 2);
  EXPECT_EQ(r.errors[1].col, 9);
  EXPECT_NE(r.errors[1].to_string().find("\t       ^"), std::string::npos);  // tabs kept for alignment
}

TEST(Assembler, StopsAfterFiftyErrors) {
  std::string text;
  for (int i = 0; i < 500; ++i) text += "bogus\n";
  const AssembleResult r = assemble(text, "many.wsa");
  ASSERT_EQ(r.errors.size(), 51u);
  EXPECT_NE(r.errors.back().message.find("too many errors"), std::string::npos);
}

TEST(Assembler, HostileInputsAreErrorsNotCrashes) {
  const std::string deep = ".equ X, " + std::string(100000, '(') + "1" + std::string(100000, ')') + "\nli r1, X\n";
  EXPECT_FALSE(assemble(deep, "deep.wsa").object);
  EXPECT_FALSE(assemble(std::string("\x7f\x45\x4c\x46\x00\x01", 6), "elf.wsa").object);
  EXPECT_FALSE(assemble(".data\nx: .f32 [99999999999999999999]\n", "big.wsa").object);
  EXPECT_FALSE(assemble(".data\nx: .f32 [0x7FFFFFFFFFFFFFFF]\n", "big.wsa").object);
  EXPECT_FALSE(assemble("li r1, " + std::string(1 << 20, '1') + "\n", "long.wsa").object);
  EXPECT_FALSE(assemble(".equ A, B\n.equ B, A\nli r1, A\n", "cycle.wsa").object);
  // Exponential blow-up through constants is avoided by evaluating each constant once.
  std::string chain = ".equ C0, 1\n";
  for (int i = 1; i < 60; ++i) chain += ".equ C" + std::to_string(i) + ", C" + std::to_string(i - 1) + " + C" + std::to_string(i - 1) + "\n";
  chain += "li r1, C59 & 0xFFFF\n";
  EXPECT_TRUE(assemble(chain, "chain.wsa").object.has_value());
}

}  // namespace
}  // namespace wsemu::isa
