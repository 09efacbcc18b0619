// IEEE 754 half precision <-> single precision, portable scalar code.
//
// GGUF stores F16 tensors and the Q8_0 block scales as IEEE halves. The AVX2 kernels convert
// with F16C instead; both give exactly the same floats, because every half is exactly
// representable as a float (f16_to_f32 is exact) and f32_to_f16 rounds to nearest-even like
// vcvtps2ph with rounding mode 0.
//
// The functions are `static` so that a copy compiled into a *_avx2.cpp file (with AVX2
// enabled) can never be picked by the linker for portable code.
#pragma once

#include <cstdint>
#include <cstring>
#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace pk::kernels {

static inline float f16_to_f32(uint16_t h) {
#if defined(__F16C__)
    // Compiled into a *_avx2.cpp / *_avx512.cpp file: the instruction, the same float (but for a
    // signalling NaN, which it quiets).
    return _cvtsh_ss(h);
#else
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1Fu;
    uint32_t mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0x1Fu) {
        bits = sign | 0x7F800000u | (mant << 13);  // inf or NaN (payload kept)
    } else if (exp != 0) {
        bits = sign | ((exp + 112u) << 23) | (mant << 13);  // normal: rebias 15 -> 127
    } else if (mant == 0) {
        bits = sign;  // +-0
    } else {
        // Subnormal half: shift the mantissa up until its leading 1 is the implicit bit.
        uint32_t e = 113;
        while ((mant & 0x400u) == 0) {
            mant <<= 1;
            --e;
        }
        bits = sign | (e << 23) | ((mant & 0x3FFu) << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
#endif
}

static inline uint16_t f32_to_f16(float f) {
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
    const uint32_t abs = bits & 0x7FFFFFFFu;
    if (abs >= 0x7F800000u) {  // inf or NaN (NaN stays a quiet NaN)
        return static_cast<uint16_t>(sign | 0x7C00u | (abs > 0x7F800000u ? 0x200u : 0u));
    }
    if (abs >= 0x477FF000u) return static_cast<uint16_t>(sign | 0x7C00u);  // rounds past 65504
    const int32_t exp = static_cast<int32_t>(abs >> 23) - 127;
    if (exp >= -14) {
        // Normal half: drop 13 mantissa bits, round to nearest even (a carry into the
        // exponent is the correct result).
        const uint32_t m = abs + 0x0FFFu + ((abs >> 13) & 1u);
        return static_cast<uint16_t>(sign | ((m - (112u << 23)) >> 13));
    }
    if (exp < -25) return sign;  // below half the smallest subnormal: rounds to zero
    // Subnormal half: value = mant_with_implicit_bit * 2^(exp-23), in units of 2^-24.
    const uint32_t mant = (abs & 0x7FFFFFu) | 0x800000u;
    const int shift = -exp - 1;  // 14..24: bits dropped so that one unit is 2^-24
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rest = mant & ((1u << shift) - 1u);
    uint32_t q = mant >> shift;
    if (rest > half || (rest == half && (q & 1u))) ++q;
    return static_cast<uint16_t>(sign | q);
}

}  // namespace pk::kernels
