// IEEE binary16 <-> binary32 conversion, bit-exact and without hardware support.
//
// Contract: fp32_to_fp16 rounds to nearest, ties to even, overflows to infinity and keeps NaNs
// quiet NaNs (payload truncated, never turned into infinity); fp16_to_fp32 is exact. Used by the
// assembler for .f16 data and by the disassembler to print it; it holds no state.
#pragma once

#include <cstdint>

namespace wsemu::isa {

uint16_t fp32_to_fp16(float value);
float fp16_to_fp32(uint16_t bits);

}  // namespace wsemu::isa
