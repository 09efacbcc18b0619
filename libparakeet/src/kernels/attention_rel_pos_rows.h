// The per-row body of rel_pos_attention, written once as plain loops and compiled twice: by
// attention_rel_pos.cpp for the portable path and by attention_rel_pos_avx2.cpp with
// AVX2/FMA, where the compiler vectorises the loops over key frames. The including file
// defines PK_ATTENTION_NS so the two copies live in different namespaces (no ODR clash).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/ops_softmax.h"

namespace pk::kernels::PK_ATTENTION_NS {

// Inputs of one head, transposed so that the loops over key frames read contiguous memory.
struct AttentionHead {
    const float* kT;  // [dk, T]
    const float* pT;  // [dk, 2T - 1]
    const float* v;   // row j of head h: v + j * ld
    int64_t ld;       // row stride of v (H * dk)
    int64_t T;
    int64_t dk;
};

// Key frames handled per register block.
constexpr int64_t kKeyBlock = 32;

// out[0..dk) = attention output of one query row; qu = q + bias_u, qv = q + bias_v;
// `scores` has room for T floats.
inline void attend_row(const AttentionHead& a, int64_t i, const float* qu, const float* qv,
                       float* scores, float* out) {
    const int64_t T = a.T, dk = a.dk;
    const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
    const float* p_row0 = a.pT + (T - 1 - i);  // column of relative position i - 0
    const int64_t p_ld = 2 * T - 1;
    for (int64_t j0 = 0; j0 < T; j0 += kKeyBlock) {
        const int64_t n = T - j0 < kKeyBlock ? T - j0 : kKeyBlock;
        float ac[kKeyBlock] = {};
        float bd[kKeyBlock] = {};
        for (int64_t c = 0; c < dk; ++c) {
            const float* kr = a.kT + c * T + j0;
            const float* pr = p_row0 + c * p_ld + j0;
            const float quc = qu[c], qvc = qv[c];
            for (int64_t jj = 0; jj < n; ++jj) {
                ac[jj] += quc * kr[jj];
                bd[jj] += qvc * pr[jj];
            }
        }
        for (int64_t jj = 0; jj < n; ++jj) scores[j0 + jj] = (ac[jj] + bd[jj]) * inv_scale;
    }
    softmax_serial(scores, 1, T, scores);
    for (int64_t c = 0; c < dk; ++c) out[c] = 0.0f;
    for (int64_t j = 0; j < T; ++j) {
        const float w = scores[j];
        const float* vr = a.v + j * a.ld;
        for (int64_t c = 0; c < dk; ++c) out[c] += w * vr[c];
    }
}

}  // namespace pk::kernels::PK_ATTENTION_NS
