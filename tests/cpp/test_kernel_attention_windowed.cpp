// windowed_rel_pos_attention (the chunked_limited attention of the cache-aware models) at
// every ISA level: against a double-precision reference of its formula, with the keys as rows
// and transposed (a stream's cache keeps them transposed, with finite values past them); the
// two forms give the same bits; a too-short transposed row is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_local_rel_pos_block.h"
#include "kernels/attention_windowed_rel_pos.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::kernels::local_attention::kColumnPad;

class WindowedAttention : public isa_test::LevelTest {};

// A streaming step's shape: `rows` queries after `cached` keys, each seeing all n keys, with
// relative positions L+R .. -R (P = L + 2R + 1 rows).
struct Step {
    int64_t H = 4, dk = 24, rows = 2, cached = 9, L = 9, R = 1;
    int64_t n() const { return cached + rows; }
    int64_t P() const { return L + 2 * R + 1; }
    int64_t d() const { return H * dk; }
};

struct Inputs {
    std::vector<float> q, k, v, p, bu, bv, pT;
};

Inputs make_inputs(const Step& s) {
    Inputs in{kt::random_vector(s.rows * s.d(), 1, -1, 1), kt::random_vector(s.n() * s.d(), 2, -1, 1),
              kt::random_vector(s.n() * s.d(), 3, -1, 1),  kt::random_vector(s.P() * s.d(), 4, -1, 1),
              kt::random_vector(s.d(), 5, -1, 1),          kt::random_vector(s.d(), 6, -1, 1),
              {}};
    in.pT.resize(static_cast<size_t>(s.d() * pk::kernels::positions_stride(s.P())));
    pk::kernels::transpose_positions(in.p.data(), s.P(), s.H, s.dk, in.pT.data());
    return in;
}

// The keys transposed with row stride ld and key 0 in column `offset`; the other columns hold
// finite values that must not matter.
std::vector<float> transposed(const Step& s, const std::vector<float>& k, int64_t offset, int64_t ld) {
    std::vector<float> kT = kt::random_vector(static_cast<size_t>(s.d() * ld), 7, -50, 50);
    for (int64_t j = 0; j < s.n(); ++j)
        for (int64_t c = 0; c < s.d(); ++c) kT[c * ld + offset + j] = k[j * s.d() + c];
    return kT;
}

std::vector<float> attend(const pk::kernels::KernelTable& kt, const Step& s, const Inputs& in, const float* kT,
                          int64_t ld, int threads) {
    pk::ThreadTeam team(threads);
    pk::Arena arena;
    std::vector<int64_t> begin(static_cast<size_t>(s.rows), 0), end(static_cast<size_t>(s.rows), s.n());
    std::vector<float> out(static_cast<size_t>(s.rows * s.d()), -1.0f);
    const int64_t max_rel = s.L + s.R;
    if (kT)
        pk::kernels::windowed_rel_pos_attention(kt, team, arena, in.q.data(), s.rows, pk::kernels::TransposedKeys{kT, ld},
                                                in.v.data(), s.n(), in.pT.data(), s.P(), max_rel, in.bu.data(),
                                                in.bv.data(), s.H, s.dk, s.cached, begin.data(), end.data(), out.data());
    else
        pk::kernels::windowed_rel_pos_attention(kt, team, arena, in.q.data(), s.rows, in.k.data(), in.v.data(), s.n(),
                                                in.pT.data(), s.P(), max_rel, in.bu.data(), in.bv.data(), s.H, s.dk,
                                                s.cached, begin.data(), end.data(), out.data());
    return out;
}

// score(r, j) = ((q_r + u) · k_j + (q_r + v) · p(max_rel - (cached + r - j))) / sqrt(dk), softmax over
// j, then the weighted sum of v_j; in double.
std::vector<double> reference(const Step& s, const Inputs& in) {
    std::vector<double> out(static_cast<size_t>(s.rows * s.d()), 0.0);
    for (int64_t h = 0; h < s.H; ++h)
        for (int64_t r = 0; r < s.rows; ++r) {
            std::vector<double> score(static_cast<size_t>(s.n()));
            double top = -1e300, sum = 0.0;
            for (int64_t j = 0; j < s.n(); ++j) {
                const int64_t prow = s.L + s.R - (s.cached + r - j);
                double a = 0.0, b = 0.0;
                for (int64_t c = 0; c < s.dk; ++c) {
                    const int64_t i = h * s.dk + c;
                    a += (double(in.q[r * s.d() + i]) + in.bu[i]) * in.k[j * s.d() + i];
                    b += (double(in.q[r * s.d() + i]) + in.bv[i]) * in.p[prow * s.d() + i];
                }
                score[j] = (a + b) / std::sqrt(double(s.dk));
                top = std::max(top, score[j]);
            }
            for (double& x : score) sum += (x = std::exp(x - top));
            for (int64_t j = 0; j < s.n(); ++j)
                for (int64_t c = 0; c < s.dk; ++c)
                    out[r * s.d() + h * s.dk + c] += score[j] / sum * in.v[j * s.d() + h * s.dk + c];
        }
    return out;
}

TEST_P(WindowedAttention, BothKeyFormsMatchTheReferenceWithTheSameBits) {
    for (const Step& s : {Step{}, Step{8, 64, 2, 70, 70, 1}, Step{2, 40, 4, 17, 20, 3}}) {
        SCOPED_TRACE("H " + std::to_string(s.H) + " dk " + std::to_string(s.dk) + " rows " + std::to_string(s.rows));
        const Inputs in = make_inputs(s);
        const std::vector<float> rows = attend(kernels(), s, in, nullptr, 0, 1);
        const std::vector<double> want = reference(s, in);
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(rows[i], want[i], 2e-5) << "value " << i;
        for (const int64_t offset : {int64_t{0}, int64_t{13}}) {
            const int64_t ld = offset + s.n() + kColumnPad + 5;
            const std::vector<float> kT = transposed(s, in.k, offset, ld);
            for (const int threads : {1, 2}) {
                const std::vector<float> got = attend(kernels(), s, in, kT.data() + offset, ld, threads);
                EXPECT_EQ(std::memcmp(got.data(), rows.data(), rows.size() * sizeof(float)), 0)
                    << "offset " << offset << ", " << threads << " threads";
            }
        }
    }
}

TEST_P(WindowedAttention, RefusesTransposedRowsWithoutRoomPastTheKeys) {
    const Step s;
    const Inputs in = make_inputs(s);
    const int64_t ld = s.n() + kColumnPad - 1;
    const std::vector<float> kT = transposed(s, in.k, 0, ld);
    EXPECT_THROW(attend(kernels(), s, in, kT.data(), ld, 1), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(WindowedAttention);

}  // namespace
