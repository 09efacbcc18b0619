// bfloat16 <-> single precision, portable scalar code (the opt-in bf16 matmul path).
//
// A bfloat16 is the upper half of a float: same sign and 8-bit exponent, 7 mantissa bits.
// Widening is exact; narrowing rounds to nearest, ties to even, as vcvtne2ps2bf16 does for
// normal numbers (the packer uses this at load, the AVX-512 kernels that instruction per
// call). NaNs stay NaN (quiet).
//
// `static` for the reason given in f16.h: a copy compiled into an *_avx512.cpp file must never
// be picked by the linker for portable code.
#pragma once

#include <cstdint>
#include <cstring>

namespace pk::kernels {

static inline float bf16_to_f32(uint16_t h) {
    const uint32_t bits = static_cast<uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

static inline uint16_t f32_to_bf16(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    if ((bits & 0x7FFFFFFFu) > 0x7F800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
    // Adding 0x7FFF plus the lowest kept bit rounds half-way cases to the even neighbour;
    // a carry into the exponent is the correct rounding (up to infinity past the largest).
    bits += 0x7FFFu + ((bits >> 16) & 1u);
    return static_cast<uint16_t>(bits >> 16);
}

}  // namespace pk::kernels
