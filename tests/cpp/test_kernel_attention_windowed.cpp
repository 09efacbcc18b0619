// windowed_rel_pos_attention (the chunked_limited attention of the cache-aware models, as a
// streaming step runs it: queries after a cache of keys) at every ISA level: against a
// double-precision reference of its formula, for two query rows (a 160 ms step, the kernels'
// 2-row tiles) and more; the same bits on 1 and 2 threads; bad windows are refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_windowed_rel_pos.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"
#include "test_kernel_ops_util.h"

namespace {

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

Inputs make_inputs(const pk::kernels::KernelTable& kt, const Step& s) {
    Inputs in{kt::random_vector(s.rows * s.d(), 1, -1, 1), kt::random_vector(s.n() * s.d(), 2, -1, 1),
              kt::random_vector(s.n() * s.d(), 3, -1, 1),  kt::random_vector(s.P() * s.d(), 4, -1, 1),
              kt::random_vector(s.d(), 5, -1, 1),          kt::random_vector(s.d(), 6, -1, 1),
              {}};
    in.pT.resize(static_cast<size_t>(s.d() * pk::kernels::positions_stride(s.P())));
    pk::kernels::transpose_positions(kt, in.p.data(), s.P(), s.H, s.dk, in.pT.data());
    return in;
}

std::vector<float> attend(const pk::kernels::KernelTable& kt, const Step& s, const Inputs& in, int threads,
                          int64_t first_key = 0) {
    pk::ThreadTeam team(threads);
    pk::Arena arena;
    std::vector<int64_t> begin(static_cast<size_t>(s.rows), first_key), end(static_cast<size_t>(s.rows), s.n());
    std::vector<float> out(static_cast<size_t>(s.rows * s.d()), -1.0f);
    pk::kernels::windowed_rel_pos_attention(kt, team, arena, in.q.data(), s.rows, in.k.data(), in.v.data(), s.n(),
                                            in.pT.data(), s.P(), s.L + s.R, in.bu.data(), in.bv.data(), s.H, s.dk,
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

TEST_P(WindowedAttention, MatchesTheReferenceWithTheSameBitsOnAnyTeam) {
    for (const Step& s : {Step{}, Step{8, 64, 2, 70, 70, 1}, Step{2, 40, 4, 17, 20, 3}}) {
        SCOPED_TRACE("H " + std::to_string(s.H) + " dk " + std::to_string(s.dk) + " rows " + std::to_string(s.rows));
        const Inputs in = make_inputs(kernels(), s);
        const std::vector<float> one = attend(kernels(), s, in, 1);
        const std::vector<double> want = reference(s, in);
        for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR(one[i], want[i], 2e-5) << "value " << i;
        const std::vector<float> two = attend(kernels(), s, in, 2);
        EXPECT_EQ(std::memcmp(one.data(), two.data(), one.size() * sizeof(float)), 0) << "2 threads";
    }
}

TEST_P(WindowedAttention, RefusesWindowsOutsideTheKeysOrPositions) {
    const Step s;
    const Inputs in = make_inputs(kernels(), s);
    EXPECT_THROW(attend(kernels(), s, in, 1, s.n()), std::invalid_argument);  // an empty window
    Step far = s;
    far.cached = s.cached + 1;  // key 0 is then L+R+1 behind the last query: no position for it
    EXPECT_THROW(attend(kernels(), far, make_inputs(kernels(), far), 1), std::invalid_argument);
}

INSTANTIATE_ISA_LEVELS(WindowedAttention);

}  // namespace
