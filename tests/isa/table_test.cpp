// Checks of the instruction table itself (isa/isa.def): every encoding distinct and decodable,
// every instruction fits in one 64-bit word, mnemonics unique and well-formed.
#include <gtest/gtest.h>

#include <set>

#include "isa/instruction.hpp"

namespace wsemu::isa {
namespace {

int encoded_bits(const InsnInfo& in) {
  int bits = 16;
  for (int i = 0; i < in.num_operands; ++i) bits += operand_width(in.operands[static_cast<size_t>(i)]);
  if (is_vector(in.timing)) bits += 12;  // async flag, microthread, action, task
  return bits;
}

TEST(IsaTable, EncodingsDoNotOverlap) {
  // The opcode occupies bits [15:0] of every instruction, so each instruction matches the
  // pattern (word & 0xFFFF) == encoding; two patterns over the same mask overlap iff equal.
  constexpr uint64_t kOpcodeMask = 0xFFFF;
  const auto table = instruction_table();
  for (size_t i = 0; i < table.size(); ++i)
    for (size_t j = i + 1; j < table.size(); ++j)
      EXPECT_NE(table[i].encoding & kOpcodeMask, table[j].encoding & kOpcodeMask)
          << table[i].mnemonic << " and " << table[j].mnemonic << " share an encoding";
}

TEST(IsaTable, MnemonicsAreUniqueAndLowerCase) {
  std::set<std::string_view> seen;
  for (const InsnInfo& in : instruction_table()) {
    EXPECT_TRUE(seen.insert(in.mnemonic).second) << "duplicate mnemonic " << in.mnemonic;
    for (char c : in.mnemonic) EXPECT_TRUE((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) << in.mnemonic;
    EXPECT_FALSE(in.description.empty()) << in.mnemonic;
  }
}

TEST(IsaTable, EveryInstructionFitsInOneWord) {
  for (const InsnInfo& in : instruction_table()) EXPECT_LE(encoded_bits(in), 64) << in.mnemonic;
}

TEST(IsaTable, LookupsAgreeWithTheTable) {
  int index = 0;
  for (const InsnInfo& in : instruction_table()) {
    EXPECT_EQ(static_cast<int>(in.id), index++);
    EXPECT_EQ(find_mnemonic(in.mnemonic), &in);
    EXPECT_EQ(find_encoding(in.encoding), &in);
    EXPECT_EQ(&info(in.id), &in);
  }
  EXPECT_EQ(find_mnemonic("nosuch"), nullptr);
}

TEST(IsaTable, FamiliesFollowTheHighByte) {
  // Vector classes live in families 0x06..0x08 and nowhere else (the README groups by family).
  for (const InsnInfo& in : instruction_table()) {
    const int family = in.encoding >> 8;
    EXPECT_GE(family, 0x01);
    EXPECT_LE(family, 0x0B);
    EXPECT_EQ(is_vector(in.timing), family >= 0x06 && family <= 0x08) << in.mnemonic;
  }
}

TEST(IsaTable, CoversTheIssueList) {
  for (std::string_view m : {"fmacs", "fadds", "fsubs", "fmuls", "fmovs", "fnegs", "fmaxs", "fabss", "fh2s", "fs2h",
                             "fmach", "faddh", "mov16", "mov32", "add16", "and16", "or16", "xor16", "sll16",
                             "bind", "activate", "block", "unblock", "exit", "iqinit", "qflush", "tsc", "dprint",
                             "call", "ret", "ld16", "st32", "dsdbase", "dsdlen", "dsdstride", "dsdinc", "sendc"})
    EXPECT_NE(find_mnemonic(m), nullptr) << m;
}

}  // namespace
}  // namespace wsemu::isa
