// Relative-position attention against a double-precision reference that follows NeMo's
// code literally (matrix_bd over all 2T-1 positions, then rel_shift by pad/reshape/slice),
// and bitwise identical across team sizes, at every ISA level; a batch of sequences of
// several lengths gives each sequence the bits it gets alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "isa_levels.h"
#include "kernels/attention_rel_pos.h"

namespace {

class RelPosAttention : public isa_test::LevelTest {};

std::vector<float> random_vec(size_t n, std::mt19937& rng) {
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

// NeMo RelPositionMultiHeadAttention.rel_shift on one head's [T, P] matrix:
// pad one zero column on the left, view as [P + 1, T], drop the first row, view as [T, P].
std::vector<double> rel_shift(const std::vector<double>& x, int64_t T, int64_t P) {
    std::vector<double> padded(static_cast<size_t>(T * (P + 1)), 0.0);
    for (int64_t i = 0; i < T; ++i)
        for (int64_t r = 0; r < P; ++r) padded[i * (P + 1) + r + 1] = x[i * P + r];
    // Viewed as [P + 1, T], rows 1.. are elements T .. T*(P+1)-1 of the flat buffer.
    return std::vector<double>(padded.begin() + T, padded.end());
}

std::vector<float> reference(const std::vector<float>& q, const std::vector<float>& k,
                             const std::vector<float>& v, const std::vector<float>& p,
                             const std::vector<float>& bu, const std::vector<float>& bv,
                             int64_t T, int64_t H, int64_t dk) {
    const int64_t ld = H * dk, P = 2 * T - 1;
    std::vector<float> out(static_cast<size_t>(T * ld));
    for (int64_t h = 0; h < H; ++h) {
        std::vector<double> bd(static_cast<size_t>(T * P));
        for (int64_t i = 0; i < T; ++i)
            for (int64_t r = 0; r < P; ++r) {
                double s = 0;
                for (int64_t c = 0; c < dk; ++c)
                    s += (double(q[i * ld + h * dk + c]) + bv[h * dk + c]) * p[r * ld + h * dk + c];
                bd[i * P + r] = s;
            }
        const std::vector<double> shifted = rel_shift(bd, T, P);
        for (int64_t i = 0; i < T; ++i) {
            std::vector<double> score(static_cast<size_t>(T));
            double mx = -1e300;
            for (int64_t j = 0; j < T; ++j) {
                double ac = 0;
                for (int64_t c = 0; c < dk; ++c)
                    ac += (double(q[i * ld + h * dk + c]) + bu[h * dk + c]) * k[j * ld + h * dk + c];
                score[j] = (ac + shifted[i * P + j]) / std::sqrt(double(dk));
                mx = std::max(mx, score[j]);
            }
            double sum = 0;
            for (auto& s : score) sum += (s = std::exp(s - mx));
            for (int64_t c = 0; c < dk; ++c) {
                double o = 0;
                for (int64_t j = 0; j < T; ++j) o += score[j] / sum * v[j * ld + h * dk + c];
                out[i * ld + h * dk + c] = static_cast<float>(o);
            }
        }
    }
    return out;
}

struct Inputs {
    std::vector<float> q, k, v, p, bu, bv;
};

Inputs make_inputs(int64_t T, int64_t H, int64_t dk, unsigned seed) {
    std::mt19937 rng(seed);
    const size_t n = static_cast<size_t>(T * H * dk);
    return {random_vec(n, rng), random_vec(n, rng), random_vec(n, rng),
            random_vec(static_cast<size_t>((2 * T - 1) * H * dk), rng),
            random_vec(static_cast<size_t>(H * dk), rng), random_vec(static_cast<size_t>(H * dk), rng)};
}

std::vector<float> run(const pk::kernels::KernelTable& kt, const Inputs& in, int64_t T, int64_t H,
                       int64_t dk, int threads) {
    pk::ThreadTeam team(threads);
    pk::Arena arena;
    std::vector<float> out(static_cast<size_t>(T * H * dk));
    pk::kernels::rel_pos_attention(kt, team, arena, in.q.data(), in.k.data(), in.v.data(),
                                   in.p.data(), in.bu.data(), in.bv.data(), T, H, dk, out.data());
    EXPECT_EQ(arena.used_bytes(), 0u);  // scratch given back
    return out;
}

TEST_P(RelPosAttention, MatchesNeMoRelShiftReference) {
    for (auto [T, H, dk] : std::vector<std::array<int64_t, 3>>{{1, 1, 1}, {2, 1, 3}, {7, 2, 5}, {37, 3, 16}, {45, 2, 24}, {70, 2, 64}}) {
        const Inputs in = make_inputs(T, H, dk, static_cast<unsigned>(T * 31 + dk));
        const auto got = run(kernels(), in, T, H, dk, 2);
        const auto want = reference(in.q, in.k, in.v, in.p, in.bu, in.bv, T, H, dk);
        for (size_t i = 0; i < got.size(); ++i)
            ASSERT_NEAR(got[i], want[i], 2e-4 * (1 + std::fabs(want[i]))) << "T=" << T << " i=" << i;
    }
}

TEST_P(RelPosAttention, BitwiseIdenticalAcrossTeamSizes) {
    const int64_t T = 45, H = 4, dk = 8;
    const Inputs in = make_inputs(T, H, dk, 7);
    const auto one = run(kernels(), in, T, H, dk, 1);
    for (int threads : {2, 3, 4}) {
        const auto many = run(kernels(), in, T, H, dk, threads);
        ASSERT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(float)), 0) << threads;
    }
}

TEST_P(RelPosAttention, BatchGivesEachSequenceItsBitsAlone) {
    // Lengths of one row block or less, of several, and 1 (a single position), so that the
    // shares of work cut sequences in different places at 2 and 3 threads.
    const int64_t H = 3, dk = 16;
    const std::vector<int64_t> lengths = {37, 1, 8, 70, 9, 2};
    std::vector<Inputs> in;
    for (size_t s = 0; s < lengths.size(); ++s) in.push_back(make_inputs(lengths[s], H, dk, 100 + unsigned(s)));
    // The batch shares bias_u and bias_v: every sequence takes those of the first.
    for (Inputs& x : in) x.bu = in[0].bu, x.bv = in[0].bv;
    for (int threads : {1, 2, 3}) {
        pk::ThreadTeam team(threads);
        pk::Arena arena;
        std::vector<std::vector<float>> outs;
        std::vector<pk::kernels::RelPosSequence> seqs;
        for (size_t s = 0; s < lengths.size(); ++s) outs.emplace_back(static_cast<size_t>(lengths[s] * H * dk));
        for (size_t s = 0; s < lengths.size(); ++s)
            seqs.push_back({in[s].q.data(), in[s].k.data(), in[s].v.data(), in[s].p.data(), lengths[s], outs[s].data()});
        pk::kernels::rel_pos_attention_batch(kernels(), team, arena, seqs.data(), static_cast<int64_t>(seqs.size()),
                                             in[0].bu.data(), in[0].bv.data(), H, dk);
        EXPECT_EQ(arena.used_bytes(), 0u);  // scratch given back
        for (size_t s = 0; s < lengths.size(); ++s) {
            const auto alone = run(kernels(), in[s], lengths[s], H, dk, 1);
            ASSERT_EQ(std::memcmp(alone.data(), outs[s].data(), alone.size() * sizeof(float)), 0)
                << "sequence " << s << ", " << threads << " threads";
        }
    }
}

// The score kernel's contract (kernel_table.h) to the bit, where a level's kernels fuse the
// multiply-adds (x86's avx2 and avx512): each score is ((qu_r . k_j) + (qv_r . p_{T-1-i+j}))
// / sqrt(dk), each dot product a chain of fused multiply-adds over the channels in order. So
// the blocking of rows, keys and positions (and the shift of each row's positions) changes
// no bit, and the kernel writes the nr score rows and nothing around them.
TEST_P(RelPosAttention, ScoresAreChannelOrderFmaChains) {
    if (level() != pk::IsaLevel::Avx2 && level() != pk::IsaLevel::Avx512)
        GTEST_SKIP() << "the " << pk::isa_level_name(level()) << " score kernel does not promise fused multiply-adds";
    constexpr int64_t B = pk::kernels::kRelPosRowBlock;
    for (auto [T, dk] : std::vector<std::array<int64_t, 2>>{{1, 1}, {2, 3}, {5, 7}, {15, 8}, {16, 64}, {17, 5},
                                                            {38, 64}, {126, 64}, {40, 128}}) {
        std::mt19937 rng(static_cast<unsigned>(T * 7 + dk));
        const int64_t P = 2 * T - 1;
        const std::vector<float> kT = random_vec(static_cast<size_t>(dk * T), rng);
        const std::vector<float> pT = random_vec(static_cast<size_t>(dk * P), rng);
        const float inv_scale = 1.0f / std::sqrt(static_cast<float>(dk));
        for (int64_t i0 = 0; i0 < T; i0 += B) {
            const int64_t nr = std::min(B, T - i0);
            std::vector<float> qu = random_vec(static_cast<size_t>(dk * B), rng), qv = qu;
            std::shuffle(qv.begin(), qv.end(), rng);
            for (int64_t c = 0; c < dk; ++c)
                for (int64_t r = nr; r < B; ++r) qu[c * B + r] = qv[c * B + r] = 0.0f;
            // The score rows with T guard floats on each side.
            const float guard = -12345.0f;
            std::vector<float> buf(static_cast<size_t>((nr + 2) * T), guard);
            kernels().attention.rel_pos_scores(kT.data(), pT.data(), T, dk, i0, nr, qu.data(), qv.data(),
                                               buf.data() + T);
            for (int64_t j = 0; j < T; ++j) {
                ASSERT_EQ(buf[j], guard) << "written before the rows: T=" << T;
                ASSERT_EQ(buf[(nr + 1) * T + j], guard) << "written after the rows: T=" << T;
            }
            for (int64_t r = 0; r < nr; ++r)
                for (int64_t j = 0; j < T; ++j) {
                    float ac = 0.0f, bd = 0.0f;
                    for (int64_t c = 0; c < dk; ++c) {
                        ac = std::fma(qu[c * B + r], kT[c * T + j], ac);
                        bd = std::fma(qv[c * B + r], pT[c * P + (T - 1 - (i0 + r)) + j], bd);
                    }
                    ASSERT_EQ(buf[(r + 1) * T + j], (ac + bd) * inv_scale)
                        << "T=" << T << " dk=" << dk << " row " << i0 + r << " key " << j;
                }
        }
    }
}

INSTANTIATE_ISA_LEVELS(RelPosAttention);

}  // namespace
