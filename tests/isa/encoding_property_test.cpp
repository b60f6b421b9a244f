// Generated property tests over the whole table: for every opcode, random valid operands (and
// completion fields for vector operations) survive encode -> decode, and the assembly text of
// the instruction assembles to the same word. Random words never crash the decoder.
#include <gtest/gtest.h>

#include "isa/assembler.hpp"
#include "isa/disassembler.hpp"
#include "isa/instruction.hpp"
#include "tests/isa/test_support.hpp"

namespace wsemu::isa {
namespace {

constexpr int kSamplesPerOpcode = 300;

TEST(IsaEncoding, DecodeInvertsEncodeForRandomOperands) {
  std::mt19937_64 rng(20240611);
  for (const InsnInfo& in : instruction_table()) {
    for (int k = 0; k < kSamplesPerOpcode; ++k) {
      int next_string = 0;
      const Instruction insn = test::random_instruction(in.id, rng, next_string);
      ASSERT_EQ(validate(insn), "") << in.mnemonic;
      const uint64_t word = encode(insn);
      EXPECT_EQ(word & 0xFFFF, in.encoding);
      const std::optional<Instruction> back = decode(word);
      ASSERT_TRUE(back.has_value()) << in.mnemonic << " word " << std::hex << word;
      EXPECT_EQ(*back, insn) << in.mnemonic << " word " << std::hex << word;
    }
  }
}

TEST(IsaEncoding, AssemblyTextOfARandomInstructionAssemblesToTheSameWord) {
  std::mt19937_64 rng(7);
  ObjectImage context;
  context.strings = {"a \"quoted\"\tstring\n with \\ and \x01 bytes"};
  for (const InsnInfo& in : instruction_table()) {
    for (int k = 0; k < kSamplesPerOpcode / 3; ++k) {
      int next_string = 0;
      const Instruction insn = test::random_instruction(in.id, rng, next_string);
      const std::string line = format_instruction(insn, &context);
      const AssembleResult r = assemble("        " + line + "\n", "random.wsa");
      ASSERT_TRUE(r.object.has_value()) << line << "\n" << test::all_errors(r);
      ASSERT_EQ(r.object->code.size(), 1u);
      EXPECT_EQ(r.object->code[0], encode(insn)) << line;
      if (next_string) {
        EXPECT_EQ(r.object->strings, context.strings) << line;
      }
    }
  }
}

TEST(IsaEncoding, RandomWordsNeverCrashTheDecoder) {
  std::mt19937_64 rng(99);
  int decoded = 0;
  for (int k = 0; k < 2'000'000; ++k) {
    // Half the words get a real opcode so that the operand checks are exercised too.
    uint64_t word = rng();
    if (k % 2) {
      const auto table = instruction_table();
      word = (word & ~uint64_t{0xFFFF}) | table[word % table.size()].encoding;
      word &= ~uint64_t{0} >> (rng() % 40);  // clear high bits sometimes, so some words are valid
    }
    const std::optional<Instruction> insn = decode(word);
    if (!insn) continue;
    ++decoded;
    // Whatever decodes is a valid instruction, and decodes the same way again.
    ASSERT_EQ(validate(*insn), "") << std::hex << word;
    ASSERT_EQ(decode(encode(*insn)), insn) << std::hex << word;
  }
  EXPECT_GT(decoded, 1000);
}

TEST(IsaEncoding, HandWorkedWords) {
  // add r1, r2, r3: opcode 0x0103, then three 4-bit registers from bit 16.
  Instruction add;
  add.op = Opcode::ADD;
  add.operands[0].value = 1;
  add.operands[1].value = 2;
  add.operands[2].value = 3;
  EXPECT_EQ(encode(add), 0x0103u | (1u << 16) | (2u << 20) | (3u << 24));
  // ld32 r5, [r2 - 4]: reg 5 (4 bits @16), mem: has-base 1 @20, base 2 @21..24, offset 0xFFFC @25.
  Instruction ld;
  ld.op = Opcode::LD32;
  ld.operands[0].value = 5;
  ld.operands[1] = {-4, true, 2};
  EXPECT_EQ(encode(ld), 0x0400u | (5u << 16) | (1u << 20) | (2u << 21) | (uint64_t{0xFFFC} << 25));
  // fadds.async d1, r2, d3, ut=5, unblock=9: each operand is 7 bits (is-register flag, then a
  // 6-bit number) from bit 16; the completion field starts at bit 37.
  Instruction f;
  f.op = Opcode::FADDS;
  f.operands[0] = {1, false, 0};
  f.operands[1] = {2, true, 0};
  f.operands[2] = {3, false, 0};
  f.async = {true, 5, OnDone::UNBLOCK, 9};
  const uint64_t completion = 1u | (5u << 1) | (2u << 4) | (9u << 6);
  EXPECT_EQ(encode(f), 0x0601u | (uint64_t{1} << 17) | (uint64_t{1} << 23) | (uint64_t{2} << 24) |
                           (uint64_t{3} << 31) | (completion << 37));
  // priority=high: the 2 bits after the task (0 low, 1 medium, 2 high); 3 decodes to nothing.
  f.async.priority = Priority::HIGH;
  const uint64_t with_priority = completion | (2u << 12);
  const uint64_t word = 0x0601u | (uint64_t{1} << 17) | (uint64_t{1} << 23) | (uint64_t{2} << 24) |
                        (uint64_t{3} << 31) | (with_priority << 37);
  EXPECT_EQ(encode(f), word);
  EXPECT_FALSE(decode(word | (uint64_t{3} << (37 + 12))).has_value());
}

}  // namespace
}  // namespace wsemu::isa
