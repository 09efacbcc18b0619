// MatmulKernels::tile_kq of the AArch64 levels (matmul_kquant_dotprod.cpp, matmul_kquant_i8mm.cpp)
// around a level's half tile: Half::template half<kHalves, R>(h, nunits, a, a_scale, a_corr,
// units, c, ldc, bias, accumulate) computes outputs [8 h, 8 h + 8) of R <= kRowsKq rows
// (kHalves: the weights' groups are 16 k, Q6_K). Include ONLY from *_dotprod.cpp / *_i8mm.cpp;
// everything here is `static inline`.
#pragma once

#include <cstdint>

#include "kernels/matmul_layout.h"

namespace pk::kernels::neon_kq {

// What a half tile reads of unit b: the scales s and offsets o of outputs [8 h, 8 h + 8) (group
// 1's at + kPanel) and the unit's quantised bytes u (all 16 outputs; their order is the level's).
struct UnitHalf {
    const float* s;
    const float* o;
    const int8_t* u;
};
static inline UnitHalf unit_half(const uint8_t* units, int64_t b, int64_t h) {
    using namespace matmul_detail;
    const uint8_t* unit = units + static_cast<size_t>(b) * kKqUnitBytes;
    const float* s = reinterpret_cast<const float*>(unit) + 8 * h;
    return UnitHalf{s, s + 2 * kPanel, reinterpret_cast<const int8_t*>(unit + 4 * kPanel * sizeof(float))};
}

template <class Half, bool kHalves, int R>
static inline void tile_rows(int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                             const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    for (int64_t h = 0; h < 2; ++h) {
        Half::template half<kHalves, R>(h, nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    }
}

template <class Half, bool kHalves>
static inline void tile_at(int64_t rows, int64_t nunits, const int8_t* a, const float* a_scale, const float* a_corr,
                           const uint8_t* units, float* c, int64_t ldc, const float* bias, bool accumulate) {
    static_assert(matmul_detail::kRowsKq == 4, "one instantiation per row count");
    switch (rows) {
        case 4: return tile_rows<Half, kHalves, 4>(nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
        case 3: return tile_rows<Half, kHalves, 3>(nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
        case 2: return tile_rows<Half, kHalves, 2>(nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
        default: return tile_rows<Half, kHalves, 1>(nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    }
}

template <class Half>
static inline void tile(int64_t rows, int64_t nunits, bool halves, const int8_t* a, const float* a_scale,
                        const float* a_corr, const uint8_t* units, float* c, int64_t ldc, const float* bias,
                        bool accumulate) {
    if (halves) {
        tile_at<Half, true>(rows, nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    } else {
        tile_at<Half, false>(rows, nunits, a, a_scale, a_corr, units, c, ldc, bias, accumulate);
    }
}

}  // namespace pk::kernels::neon_kq
