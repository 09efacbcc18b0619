// FastConformerEncoder::stream_steps, the batched cache-aware encoder step: each stream's output
// frames and its caches (keys, values, conv inputs) have the bits that stream_step gives the
// stream alone, step after step, in batches that mix contexts, chunk sizes on both sides of the
// matrix-vector limit (kernels::kMatvecMaxRows frames), first and later chunks, and streams
// that sit a round out. For the f32, f16 and q8_0 files of a fixture model, at every ISA level
// this CPU has, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "batch_test_support.h"
#include "isa_levels.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace {

using batch_test::random_mel;

// One stream of the test: its context and, per round, the mel frames of its chunk (0: it sits
// the round out).
struct Plan {
    pk::AttContext context;
    std::vector<int64_t> mel_frames;
};

// Rounds of chunks as CacheAwareStream cuts them: a first chunk of 1 + 8R mel frames keeps
// every encoder frame, a later one has the 9 frames of the pre-encode cache in front and drops
// 2 (8 + 8R + 9 frames give R + 1). Contexts [8, 0], [8, 1] and [8, 3] give chunks of 1, 2 and
// 4 frames; [12, 9] chunks of 7 to 10, past the matrix-vector limit (any context runs: the
// encoder's weights do not depend on it). Short chunks (a stream's last) are mixed in.
const std::vector<Plan>& plans() {
    static const std::vector<Plan> p = {
        {{8, 1}, {9, 25, 25, 25, 25, 25}},
        {{8, 0}, {1, 17, 0, 17, 17, 17}},
        {{8, 3}, {0, 25, 41, 41, 17, 41}},
        {{8, 1}, {0, 0, 9, 25, 25, 17}},
        {{12, 9}, {57, 89, 89, 0, 89, 65}},
        {{8, 3}, {25, 41, 41, 41, 41, 41}},
        {{8, 0}, {0, 0, 0, 1, 17, 17}},
    };
    return p;
}

// The encoder's output of one stream per round ({} when it sat out), and its final caches.
struct Trace {
    std::vector<std::vector<float>> out;
    pk::EncoderStreamCache cache;
};

uint32_t seed_of(size_t stream, size_t round) { return static_cast<uint32_t>(1000 * stream + round); }

int64_t drop_of(size_t round_in_stream) { return round_in_stream == 0 ? 0 : 2; }

// Runs streams [0, n) alone (batched = false) or as batches of every stream with a chunk in the
// round.
std::vector<Trace> run(const pk::FastConformerEncoder& enc, int64_t n_mels, size_t n, bool batched,
                       pk::ThreadTeam& team) {
    pk::Arena arena;
    std::vector<Trace> traces(n);
    std::vector<size_t> done(n, 0);  // chunks each stream ran
    for (size_t s = 0; s < n; ++s) traces[s].cache = enc.stream_cache(plans()[s].context);
    for (size_t round = 0; round < plans()[0].mel_frames.size(); ++round) {
        arena.reset();
        std::vector<std::vector<float>> mels(n);
        std::vector<pk::EncoderStep> steps;
        std::vector<size_t> who;
        int64_t rows = 0;
        for (size_t s = 0; s < n; ++s) {
            const int64_t frames = plans()[s].mel_frames[round];
            traces[s].out.emplace_back();
            if (frames == 0) continue;
            mels[s] = random_mel(frames, n_mels, seed_of(s, round));
            steps.push_back({mels[s].data(), frames, drop_of(done[s]++), &traces[s].cache});
            who.push_back(s);
            rows += enc.output_frames(frames);
        }
        std::vector<float> out(static_cast<size_t>(rows * enc.d_model()));
        if (batched) {
            enc.stream_steps(team, arena, steps, out.data());
        } else {
            int64_t row = 0;
            for (pk::EncoderStep& st : steps) {
                st.frames = enc.stream_step(team, arena, st.mel, st.mel_frames, st.drop, *st.cache,
                                            out.data() + row * enc.d_model());
                st.row = row;
                row += st.frames;
            }
        }
        for (size_t i = 0; i < steps.size(); ++i) {
            const float* first = out.data() + steps[i].row * enc.d_model();
            traces[who[i]].out.back().assign(first, first + steps[i].frames * enc.d_model());
        }
    }
    return traces;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// The live rows [first, first + frames) of a key or value buffer (LayerStreamCache).
std::vector<float> live_rows(const std::vector<float>& buffer, const pk::LayerStreamCache& c, int64_t d) {
    return {buffer.begin() + c.first * d, buffer.begin() + (c.first + c.frames) * d};
}

void expect_same(const Trace& alone, const Trace& batched, int64_t d, const std::string& what) {
    ASSERT_EQ(alone.out.size(), batched.out.size()) << what;
    for (size_t r = 0; r < alone.out.size(); ++r)
        EXPECT_TRUE(same_bits(alone.out[r], batched.out[r])) << what << ": the output of round " << r;
    for (size_t l = 0; l < alone.cache.layers.size(); ++l) {
        const pk::LayerStreamCache &a = alone.cache.layers[l], &b = batched.cache.layers[l];
        ASSERT_EQ(a.frames, b.frames) << what << ": layer " << l;
        ASSERT_TRUE(a.positions && b.positions) << what << ": layer " << l;
        EXPECT_TRUE(same_bits(live_rows(a.keys, a, d), live_rows(b.keys, b, d)) &&
                    same_bits(live_rows(a.values, a, d), live_rows(b.values, b, d)) && same_bits(a.conv, b.conv) &&
                    same_bits(*a.positions, *b.positions))
            << what << ": the caches of layer " << l;
    }
}

class StreamBatchEncoder : public ::testing::TestWithParam<std::string> {};

TEST_P(StreamBatchEncoder, EveryStreamGetsItsBitsAlone) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const pk::Model& model = batch_test::model_file("ca_rnnt_multi/" + GetParam(), isa);
        const pk::FastConformerEncoder& enc = model.encoder();
        const int64_t n_mels = model.config().pre.n_mels;
        for (const int threads : {1, 2}) {
            pk::ThreadTeam team(threads);
            for (const size_t n : {size_t{1}, size_t{2}, size_t{3}, plans().size()}) {
                const std::vector<Trace> alone = run(enc, n_mels, n, false, team);
                const std::vector<Trace> batched = run(enc, n_mels, n, true, team);
                for (size_t s = 0; s < n; ++s) {
                    expect_same(alone[s], batched[s], enc.d_model(), "stream " + std::to_string(s) + " of " + std::to_string(n) +
                                                          " at " + std::to_string(threads) + " threads");
                }
            }
        }
    });
}

// The plans reach both kinds of rows, or the test would not cover what it says.
TEST(StreamBatchEncoderPlans, ChunksFallOnBothSidesOfTheMatrixVectorLimit) {
    const pk::Model& model = batch_test::model_file("ca_rnnt_multi/model.gguf", isa_test::highest_level());
    bool few = false, many = false;
    for (const Plan& p : plans()) {
        size_t done = 0;
        for (const int64_t mel : p.mel_frames) {
            if (mel == 0) continue;
            const int64_t frames = model.encoder().output_frames(mel) - drop_of(done++);
            ASSERT_GT(frames, 0);
            ASSERT_LE(frames, p.context.right + 1) << "a query would reach past the relative positions";
            few |= frames <= pk::kernels::kMatvecMaxRows;
            many |= frames > pk::kernels::kMatvecMaxRows;
        }
    }
    EXPECT_TRUE(few && many);
}

INSTANTIATE_MODEL_FILES(StreamBatchEncoder);

}  // namespace
