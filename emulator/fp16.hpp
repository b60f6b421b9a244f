// IEEE 754 binary16 (half precision) conversions, written out so that every platform gives the
// same bits.
//
// Contract: float_to_half rounds to nearest, ties to even; overflow gives +-infinity, values
// below the smallest subnormal round to +-0, NaN stays NaN (quiet, sign and top payload bits
// kept). half_to_float is exact. Pure functions, no state.
#pragma once

#include <cstdint>

namespace wsemu::emu {

uint16_t float_to_half(float f);
float half_to_float(uint16_t h);

}  // namespace wsemu::emu
