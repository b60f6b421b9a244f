// Architecture profiles: the reference numbers (§4, §5, §6), overrides, and the summaries.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "emulator/arch_profile.hpp"
#include "emulator/fault.hpp"

namespace wsemu::emu {
namespace {

using isa::Timing;

// A vector operation added to isa.def without its SIMD widths in the profile table would run
// at a made-up width; every vector timing class must have one on both architectures.
TEST(ArchProfile, EveryVectorOperationOfTheTableHasASimdWidth) {
  int vector_classes = 0;
  for (const isa::InsnInfo& in : isa::instruction_table()) {
    if (!isa::is_vector(in.timing)) continue;
    ++vector_classes;
    EXPECT_GT(arch_profile("wse2").simd_width(in.timing), 0) << in.mnemonic;
    EXPECT_GT(arch_profile("wse3").simd_width(in.timing), 0) << in.mnemonic;
    EXPECT_TRUE(in.dst_bits == 16 || in.dst_bits == 32) << in.mnemonic;
    EXPECT_TRUE(in.src_bits == 16 || in.src_bits == 32) << in.mnemonic;
  }
  EXPECT_EQ(vector_classes, 30);
}

// The element widths come from the table: fp32 ops read and write 32 bits, fp16 and integer
// ops 16, conversions one of each, and the mixed multiply-add accumulates in fp32.
TEST(ArchProfile, ElementWidthsComeFromTheTable) {
  using isa::Opcode;
  auto bits = [](Opcode op, int i) { return isa::element_bits(isa::info(op), i); };
  EXPECT_EQ(bits(Opcode::FMACS, 0), 32);
  EXPECT_EQ(bits(Opcode::FMACS, 3), 32);
  EXPECT_EQ(bits(Opcode::FADDH, 1), 16);
  EXPECT_EQ(bits(Opcode::FH2S, 0), 32);
  EXPECT_EQ(bits(Opcode::FH2S, 1), 16);
  EXPECT_EQ(bits(Opcode::FS2H, 0), 16);
  EXPECT_EQ(bits(Opcode::FS2H, 1), 32);
  EXPECT_EQ(bits(Opcode::FMACHS, 0), 32);
  EXPECT_EQ(bits(Opcode::FMACHS, 1), 32);  // the fp32 accumulator
  EXPECT_EQ(bits(Opcode::FMACHS, 2), 16);
  EXPECT_EQ(bits(Opcode::MOV32, 1), 32);
  EXPECT_EQ(bits(Opcode::ADDC16, 2), 16);
}

TEST(ArchProfile, Wse2NumbersFromTheReference) {
  const ArchProfile& p = arch_profile("wse2");
  EXPECT_EQ(p.sram_bytes, 48u * 1024);
  EXPECT_EQ(p.routable_colors, 24);
  EXPECT_EQ(p.input_queue_depth, (std::array<int, 8>{6, 6, 4, 4, 2, 2, 2, 2}));
  EXPECT_EQ(p.output_queue_depth, (std::array<int, 8>{2, 2, 6, 6, 2, 2, 0, 0}));
  EXPECT_EQ(p.num_output_queues, 6);
  EXPECT_EQ(p.data_task_last, 23);
  EXPECT_EQ(p.local_task_first, 0);
  EXPECT_EQ(p.num_filters, 6);
  EXPECT_FALSE(p.explicit_microthreads);
  EXPECT_EQ(p.clock_mhz, 850.0);
  EXPECT_EQ(p.hop_latency, 1);
}

TEST(ArchProfile, Wse3NumbersFromTheReference) {
  const ArchProfile& p = arch_profile("wse3");
  EXPECT_EQ(p.input_queue_depth, (std::array<int, 8>{8, 8, 4, 4, 4, 4, 4, 4}));
  EXPECT_EQ(p.output_queue_depth, (std::array<int, 8>{8, 8, 8, 8, 8, 8, 8, 8}));
  EXPECT_EQ(p.data_task_last, 7);
  EXPECT_EQ(p.local_task_first, 8);
  EXPECT_TRUE(p.explicit_microthreads);
  EXPECT_TRUE(p.data_task_by_queue);
}

// The SIMD widths of the reference's table (§4; fmacs and fmuls, not in it, are 1 wide).
TEST(ArchProfile, SimdWidthsFromTheReference) {
  struct Width {
    Timing op;
    int wse2, wse3;
  };
  for (const Width& w : {Width{Timing::V_FADDS, 2, 4}, Width{Timing::V_FMACS, 1, 1}, Width{Timing::V_FMULS, 1, 1},
                         Width{Timing::V_FMACH, 4, 8}, Width{Timing::V_ADDC16, 1, 8}}) {
    EXPECT_EQ(arch_profile("wse2").simd_width(w.op), w.wse2) << int(w.op);
    EXPECT_EQ(arch_profile("wse3").simd_width(w.op), w.wse3) << int(w.op);
  }
}

TEST(ArchProfile, EveryTimingClassHasANumber) {
  for (const char* arch : {"wse2", "wse3"})
    for (int t = 0; t < isa::kNumTimingClasses; ++t) EXPECT_GE(arch_profile(arch).timing[t], 1) << arch << " " << t;
}

TEST(ArchProfile, Overrides) {
  ArchProfile p = arch_profile_with("wse3", {"clock_mhz=1100", "simd.V_FADDS=8", "iq_depth.3=7"});
  EXPECT_EQ(p.clock_mhz, 1100.0);
  EXPECT_EQ(p.simd_width(Timing::V_FADDS), 8);
  EXPECT_EQ(p.input_queue_depth[3], 7);
  apply_override(p, "cycles.MULDIV=5");
  EXPECT_EQ(p.cycles(Timing::MULDIV), 5);
  EXPECT_THROW(apply_override(p, "simd.V_FADDS=0"), FaultError);
  EXPECT_THROW(apply_override(p, "clock_mhz"), FaultError);
  EXPECT_THROW(apply_override(p, "local_task_first=40"), FaultError);  // empty range
  EXPECT_EQ(p.simd_width(Timing::V_FADDS), 8);  // unchanged by the failed overrides
}

TEST(ArchProfile, JsonAndTextListEveryKey) {
  const ArchProfile& p = arch_profile("wse2");
  const nlohmann::json j = profile_to_json(p);
  EXPECT_EQ(j["simd.V_FADDS"], 2);
  EXPECT_EQ(j["oq_depth.2"], 6);
  EXPECT_EQ(j["name"], "wse2");
  for (const auto& [key, value] : profile_fields(p)) {
    EXPECT_TRUE(j.contains(key)) << key;
    EXPECT_NE(profile_to_text(p).find(key), std::string::npos) << key;
  }
}

TEST(ArchProfile, TimingSummaryForTheIsaReference) {
  EXPECT_EQ(timing_summary(Timing::V_FADDS), "wse2 2, wse3 4");
  EXPECT_EQ(timing_summary(Timing::V_FMACS), "wse2 1, wse3 1");
  EXPECT_EQ(timing_summary(Timing::SCALAR), "1 cycle");
  EXPECT_EQ(timing_summary(Timing::MULDIV), "3 cycles");
}

}  // namespace
}  // namespace wsemu::emu
