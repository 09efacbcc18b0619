// Local (banded) relative-position attention against a double-precision reference written
// literally after NeMo 3.0.0's RelPositionMultiHeadAttentionLongformer (pad to a multiple of
// 2w, [T_pad, 2w + 1] band, the two slice additions of the position scores, the -10000 and
// -inf masks, a softmax over all 2w + 1 columns); against the full rel_pos_attention when the
// window covers the whole sequence; and bitwise identical across team sizes and row chunkings;
// at every ISA level.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_local_rel_pos.h"
#include "kernels/attention_rel_pos.h"
#include "test_kernel_ops_util.h"

namespace {

class LocalRelPosAttention : public isa_test::LevelTest {};

struct Shape {
    int64_t T, H, dk, L, R;
};

std::string describe(const Shape& s) {
    return "T=" + std::to_string(s.T) + " H=" + std::to_string(s.H) + " dk=" + std::to_string(s.dk) + " [" +
           std::to_string(s.L) + ", " + std::to_string(s.R) + "]";
}

struct Inputs {
    std::vector<float> q, k, v, p, bu, bv;
};

Inputs make_inputs(const Shape& s, uint32_t seed) {
    const size_t n = static_cast<size_t>(s.T * s.H * s.dk), hd = static_cast<size_t>(s.H * s.dk);
    return {kt::random_vector(n, seed, -1, 1),       kt::random_vector(n, seed + 1, -1, 1),
            kt::random_vector(n, seed + 2, -1, 1),   kt::random_vector((s.L + s.R + 1) * hd, seed + 3, -1, 1),
            kt::random_vector(hd, seed + 4, -1, 1), kt::random_vector(hd, seed + 5, -1, 1)};
}

// NeMo's forward for one sequence, step by step, in double. Returns [T, H*dk].
std::vector<double> nemo_reference(const Inputs& in, const Shape& s) {
    const int64_t T = s.T, H = s.H, dk = s.dk, L = s.L, R = s.R, ld = H * dk;
    const int64_t w = std::max(L, R);
    const int64_t pad_len = (2 * w - T % (2 * w)) % (2 * w);
    const int64_t Tp = T + pad_len, C = 2 * w + 1, P = L + R + 1;
    const double inf = std::numeric_limits<double>::infinity(), INF_VAL = 10000.0;
    std::vector<double> out(static_cast<size_t>(T * ld));
    for (int64_t h = 0; h < H; ++h) {
        // F.pad: padded frames of q, k, v are zero.
        auto at = [&](const std::vector<float>& x, int64_t frame, int64_t c) {
            return frame < T ? double(x[frame * ld + h * dk + c]) : 0.0;
        };
        // sliding_chunks_matmul_qk(q + u, k) with mask_invalid_locations: keys outside [0, Tp) are -inf.
        std::vector<double> ac(static_cast<size_t>(Tp * C)), bd(static_cast<size_t>(Tp * P));
        for (int64_t i = 0; i < Tp; ++i) {
            for (int64_t c = 0; c < C; ++c) {
                const int64_t j = i + c - w;
                double sum = 0;
                for (int64_t d = 0; d < dk && j >= 0 && j < Tp; ++d)
                    sum += (at(in.q, i, d) + in.bu[h * dk + d]) * at(in.k, j, d);
                ac[i * C + c] = j >= 0 && j < Tp ? sum : -inf;
            }
            // matmul(q + v, p^T): [Tp, L + R + 1].
            for (int64_t m = 0; m < P; ++m) {
                double sum = 0;
                for (int64_t d = 0; d < dk; ++d) sum += (at(in.q, i, d) + in.bv[h * dk + d]) * in.p[m * ld + h * dk + d];
                bd[i * P + m] = sum;
            }
        }
        std::vector<double> prob(static_cast<size_t>(C));
        for (int64_t i = 0; i < T; ++i) {  // padded query rows are zeroed by masked_fill
            double* a = &ac[i * C];
            // ac[:, :, :, :L] += bd[:, :, :, :L];  ac[:, :, :, -(R+1):] += bd[:, :, :, L:]
            for (int64_t c = 0; c < L; ++c) a[c] += bd[i * P + c];
            for (int64_t t = 0; t < R + 1; ++t) a[C - (R + 1) + t] += bd[i * P + L + t];
            for (int64_t c = 0; c < C; ++c) a[c] /= std::sqrt(double(dk));
            // scores[..., :start_pos] = -INF_VAL;  scores[..., end_pos + 1:] = -INF_VAL
            for (int64_t c = 0; c < w - L; ++c) a[c] = -INF_VAL;
            for (int64_t c = w + R + 1; c < C; ++c) a[c] = -INF_VAL;
            // d_mask = sliding_chunks_matmul_qk(ones, float_mask): -INF_VAL on padded keys,
            // -inf (mask_invalid_locations) outside [0, Tp).
            for (int64_t c = 0; c < C; ++c) {
                const int64_t j = i + c - w;
                a[c] += j < 0 || j >= Tp ? -inf : (j >= T ? -INF_VAL : 0.0);
            }
            double mx = -inf, sum = 0;
            for (int64_t c = 0; c < C; ++c) mx = std::max(mx, a[c]);
            for (int64_t c = 0; c < C; ++c) sum += prob[c] = std::exp(a[c] - mx);
            // sliding_chunks_matmul_pv: v padded with -1 outside [0, Tp), zero on padded frames.
            for (int64_t d = 0; d < dk; ++d) {
                double o = 0;
                for (int64_t c = 0; c < C; ++c) {
                    const int64_t j = i + c - w;
                    o += prob[c] / sum * (j < 0 || j >= Tp ? -1.0 : at(in.v, j, d));
                }
                out[i * ld + h * dk + d] = o;
            }
        }
    }
    return out;
}

// The kernel on query rows [row0, row0 + rows), with a fresh arena that must be empty afterwards.
std::vector<float> run_local(const pk::kernels::KernelTable& k, pk::ThreadTeam& team, const Inputs& in,
                             const Shape& s, int64_t row0, int64_t rows) {
    pk::Arena arena;
    const int64_t ld = s.H * s.dk;
    std::vector<float> out = kt::poisoned(static_cast<size_t>(rows * ld));
    pk::kernels::local_rel_pos_attention(k, team, arena, in.q.data() + row0 * ld, in.k.data(), in.v.data(),
                                         in.p.data(), in.bu.data(), in.bv.data(), s.T, row0, rows, s.H, s.dk,
                                         s.L, s.R, out.data());
    EXPECT_EQ(arena.used_bytes(), 0u) << "scratch not given back";
    return out;
}

void expect_matches_reference(const pk::kernels::KernelTable& k, const Shape& s, int64_t row0, int64_t rows,
                              int threads) {
    const Inputs in = make_inputs(s, static_cast<uint32_t>(s.T * 131 + s.dk * 7 + s.L * 3 + s.R));
    pk::ThreadTeam team(threads);
    const std::vector<float> got = run_local(k, team, in, s, row0, rows);
    const std::vector<double> all = nemo_reference(in, s);
    const int64_t ld = s.H * s.dk;
    const std::vector<double> want(all.begin() + row0 * ld, all.begin() + (row0 + rows) * ld);
    kt::expect_near_all(got, want, 2e-5, 2e-5, describe(s) + " rows " + std::to_string(row0) + "+" +
                                                   std::to_string(rows));
}

TEST_P(LocalRelPosAttention, MatchesNeMoReference) {
    const std::vector<Shape> shapes = {
        {1, 1, 12, 4, 4},      // T = 1
        {3, 2, 20, 8, 8},      // T < w
        {37, 2, 12, 5, 5},     // T not a multiple of 2w
        {20, 1, 8, 1, 1},      // smallest window
        {700, 1, 16, 8, 8},    // T much larger than the window
        {300, 1, 64, 64, 32},  // L > R: offsets 0..31 get no position term
        {300, 2, 64, 32, 64},  // L < R
        {50, 4, 20, 3, 7},     {50, 2, 12, 7, 3},
        {41, 2, 12, 5, 0},     // R = 0: the own frame gets no position term
        {41, 2, 12, 0, 4},     // L = 0
        {33, 2, 8, 1, 0},      {33, 2, 8, 0, 1},
        {400, 2, 64, 128, 128},
        {90, 1, 12, 128, 128},  // window wider than the sequence
    };
    for (const Shape& s : shapes) expect_matches_reference(kernels(), s, 0, s.T, 2);
}

TEST_P(LocalRelPosAttention, RowRangeMatchesNeMoReference) {
    expect_matches_reference(kernels(), {300, 2, 20, 32, 64}, 37, 101, 3);
    expect_matches_reference(kernels(), {300, 2, 20, 64, 32}, 250, 50, 1);  // up to the last frame
    expect_matches_reference(kernels(), {60, 1, 64, 5, 7}, 59, 1, 2);       // the last row alone
}

TEST_P(LocalRelPosAttention, ChunkedRowsEqualOneCallBitwise) {
    for (const Shape& s : std::vector<Shape>{{260, 2, 20, 16, 24}, {200, 1, 64, 128, 128}, {90, 2, 12, 7, 0}}) {
        const Inputs in = make_inputs(s, 99);
        pk::ThreadTeam team(2);
        const std::vector<float> whole = run_local(kernels(), team, in, s, 0, s.T);
        const int64_t ld = s.H * s.dk;
        for (int64_t chunk : {1, 7, 16, 23, 64}) {
            std::vector<float> joined;
            for (int64_t r0 = 0; r0 < s.T; r0 += chunk) {
                const std::vector<float> part = run_local(kernels(), team, in, s, r0, std::min(chunk, s.T - r0));
                joined.insert(joined.end(), part.begin(), part.end());
            }
            ASSERT_EQ(joined.size(), whole.size());
            EXPECT_EQ(std::memcmp(joined.data(), whole.data(), whole.size() * sizeof(float)), 0)
                << describe(s) << " in chunks of " << chunk << " (ld " << ld << ")";
        }
    }
}

TEST_P(LocalRelPosAttention, BitwiseIdenticalAcrossTeamSizes) {
    for (const Shape& s : std::vector<Shape>{{200, 4, 8, 4, 4}, {150, 2, 20, 3, 9}, {300, 2, 64, 128, 128}}) {
        const Inputs in = make_inputs(s, 7);
        const int64_t ld = s.H * s.dk;
        kt::expect_same_bits_for_thread_counts(
            static_cast<size_t>(s.T * ld),
            [&](pk::ThreadTeam& team, float* out) {
                pk::Arena arena;
                pk::kernels::local_rel_pos_attention(kernels(), team, arena, in.q.data(), in.k.data(), in.v.data(),
                                                     in.p.data(), in.bu.data(), in.bv.data(), s.T, 0, s.T, s.H,
                                                     s.dk, s.L, s.R, out);
            },
            describe(s));
    }
}

// With L == R >= T - 1 every key is in the window, and position L - m of local p row m is the
// full kernel's position T - 1 - r of its row r: the two kernels must agree.
TEST_P(LocalRelPosAttention, WideWindowEqualsFullAttention) {
    for (const Shape& s : std::vector<Shape>{{40, 2, 20, 39, 39}, {70, 2, 64, 100, 100}, {1, 1, 8, 3, 3}}) {
        Inputs in = make_inputs(s, 5);
        const int64_t T = s.T, ld = s.H * s.dk;
        const std::vector<float> p_full = kt::random_vector(static_cast<size_t>((2 * T - 1) * ld), 11, -1, 1);
        for (int64_t m = 0; m < s.L + s.R + 1; ++m) {
            const int64_t position = s.L - m;
            if (std::abs(position) <= T - 1)
                std::copy_n(p_full.begin() + (T - 1 - position) * ld, ld, in.p.begin() + m * ld);
        }
        pk::ThreadTeam team(2);
        pk::Arena arena;
        std::vector<float> full(static_cast<size_t>(T * ld));
        pk::kernels::rel_pos_attention(kernels(), team, arena, in.q.data(), in.k.data(), in.v.data(), p_full.data(),
                                       in.bu.data(), in.bv.data(), T, s.H, s.dk, full.data());
        const std::vector<float> local = run_local(kernels(), team, in, s, 0, T);
        kt::expect_near_all(local, std::vector<double>(full.begin(), full.end()), 2e-5, 2e-5, describe(s));
    }
}

// Scratch depends on the window and the team, not on T: the same high-water mark for a
// sequence six times longer.
TEST_P(LocalRelPosAttention, ScratchDoesNotGrowWithT) {
    auto high_water = [&](int64_t T) {
        const Shape s{T, 2, 32, 16, 16};
        const Inputs in = make_inputs(s, 3);
        pk::ThreadTeam team(2);
        pk::Arena arena;
        std::vector<float> out(static_cast<size_t>(T * s.H * s.dk));
        pk::kernels::local_rel_pos_attention(kernels(), team, arena, in.q.data(), in.k.data(), in.v.data(), in.p.data(),
                                             in.bu.data(), in.bv.data(), T, 0, T, s.H, s.dk, s.L, s.R, out.data());
        return arena.high_water_bytes();
    };
    const size_t short_seq = high_water(500);
    EXPECT_GT(short_seq, 0u);
    EXPECT_EQ(short_seq, high_water(3000));
}

TEST_P(LocalRelPosAttention, RejectsInvalidArguments) {
    const Shape s{10, 1, 8, 2, 2};
    const Inputs in = make_inputs(s, 1);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    std::vector<float> out(80);
    auto call = [&](int64_t row0, int64_t rows, int64_t L, int64_t R) {
        pk::kernels::local_rel_pos_attention(kernels(), team, arena, in.q.data(), in.k.data(), in.v.data(), in.p.data(),
                                             in.bu.data(), in.bv.data(), s.T, row0, rows, s.H, s.dk, L, R,
                                             out.data());
    };
    EXPECT_THROW(call(0, 10, 0, 0), std::invalid_argument);
    EXPECT_THROW(call(0, 10, -1, 2), std::invalid_argument);
    EXPECT_THROW(call(5, 6, 2, 2), std::invalid_argument);
    EXPECT_THROW(call(-1, 3, 2, 2), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(LocalRelPosAttention);

}  // namespace
