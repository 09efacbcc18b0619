// TransducerDecoder::decode_chunks, the batched greedy decode: every chunk's tokens (confidences
// included) and the carry it leaves (LSTM state, last token, TDT frames to skip) have the bits
// decode_chunk gives that stream alone, round after round, in batches of 1, 2, 3 and 7 streams
// that mix chunk sizes on both sides of the matrix-vector limit (kernels::kMatvecMaxRows
// frames) and streams that sit a round out. The encoder frames are random, so the joint emits
// tokens at many steps. For the f32, f16 and q8_0 files of the RNN-T fixture and the TDT
// fixture, at every ISA level this CPU has, at 1 and 2 threads.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "kernels/matmul.h"
#include "model/model.h"
#include "nemo_fixtures.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace {

const pk::Model& model_file(const std::string& file, pk::IsaLevel isa) {
    static std::map<std::pair<std::string, pk::IsaLevel>, std::unique_ptr<pk::Model>> cache;
    auto& m = cache[{file, isa}];
    if (!m) m = pk::Model::load(nemo_fixtures::data_dir() + "/nemo/" + file, isa_test::load_options_at(isa));
    return *m;
}

// Frames of each stream's chunk per round (0: it sits the round out).
const std::vector<std::vector<int64_t>> kPlans = {
    {2, 2, 2, 2, 2, 2}, {3, 0, 1, 6, 2, 2}, {7, 7, 0, 0, 7, 1}, {1, 1, 1, 1, 1, 1},
    {5, 2, 9, 0, 3, 4}, {0, 0, 2, 4, 8, 2}, {4, 6, 1, 2, 0, 5},
};

// What a chunk gave: its tokens and the carry after it.
struct ChunkResult {
    std::vector<pk::TranscriptToken> tokens;
    pk::TransducerCarry carry;
};

std::vector<float> frames_of(int64_t stream, int64_t round, int64_t n, int64_t d_model) {
    std::mt19937 rng(static_cast<uint32_t>(1000 * stream + round));
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> x(static_cast<size_t>(n * d_model));
    for (float& v : x) v = normal(rng);
    return x;
}

// results[stream][round] of the first n streams, each chunk alone or each round as one batch.
std::vector<std::vector<ChunkResult>> run(const pk::Model& model, size_t n, bool batched, pk::ThreadTeam& team) {
    const pk::TransducerDecoder& dec = *model.transducer();
    const int64_t d_model = model.config().enc.d_model;
    pk::Arena arena;
    std::vector<pk::TransducerCarry> carries(n);
    std::vector<std::vector<ChunkResult>> results(n);
    for (size_t round = 0; round < kPlans[0].size(); ++round) {
        std::vector<std::vector<float>> enc(n);
        std::vector<pk::ChunkDecode> chunks;
        std::vector<size_t> who;
        for (size_t s = 0; s < n; ++s) {
            const int64_t frames = kPlans[s][round];
            if (frames == 0) continue;
            enc[s] = frames_of(static_cast<int64_t>(s), static_cast<int64_t>(round), frames, d_model);
            chunks.push_back({enc[s].data(), frames, &carries[s], {}});
            who.push_back(s);
        }
        if (batched) {
            dec.decode_chunks(team, arena, chunks);
        } else {
            for (pk::ChunkDecode& c : chunks) c.tokens = dec.decode_chunk(team, arena, c.enc, c.n_frames, *c.carry);
        }
        EXPECT_EQ(arena.used_bytes(), 0u) << "the decode must give its scratch back";
        for (size_t i = 0; i < chunks.size(); ++i) results[who[i]].push_back({chunks[i].tokens, carries[who[i]]});
    }
    return results;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void expect_same(const ChunkResult& a, const ChunkResult& b, const std::string& what) {
    ASSERT_EQ(a.tokens.size(), b.tokens.size()) << what;
    for (size_t i = 0; i < a.tokens.size(); ++i) {
        const pk::TranscriptToken &x = a.tokens[i], &y = b.tokens[i];
        EXPECT_TRUE(x.id == y.id && x.frame == y.frame && x.duration == y.duration &&
                    std::memcmp(&x.confidence, &y.confidence, sizeof(float)) == 0)
            << what << ": token " << i;
    }
    EXPECT_TRUE(same_bits(a.carry.h, b.carry.h) && same_bits(a.carry.c, b.carry.c)) << what << ": the LSTM state";
    EXPECT_EQ(a.carry.last_token, b.carry.last_token) << what;
    EXPECT_EQ(a.carry.skip_frames, b.carry.skip_frames) << what;
}

class DecoderBatch : public ::testing::TestWithParam<std::string> {};

TEST_P(DecoderBatch, EveryStreamGetsItsBitsAlone) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const pk::Model& model = model_file(GetParam(), isa);
        for (const int threads : {1, 2}) {
            pk::ThreadTeam team(threads);
            for (const size_t n : {size_t{1}, size_t{2}, size_t{3}, kPlans.size()}) {
                const auto alone = run(model, n, false, team);
                const auto batched = run(model, n, true, team);
                for (size_t s = 0; s < n; ++s) {
                    ASSERT_EQ(alone[s].size(), batched[s].size());
                    for (size_t r = 0; r < alone[s].size(); ++r)
                        expect_same(alone[s][r], batched[s][r],
                                    "stream " + std::to_string(s) + " of " + std::to_string(n) + ", chunk " +
                                        std::to_string(r) + " at " + std::to_string(threads) + " threads");
                }
            }
        }
    });
}

// The streams emit tokens, or the comparison would prove little.
TEST_P(DecoderBatch, TheStreamsEmitTokens) {
    pk::ThreadTeam team(1);
    size_t tokens = 0;
    for (const auto& stream : run(model_file(GetParam(), isa_test::highest_level()), kPlans.size(), false, team))
        for (const ChunkResult& c : stream) tokens += c.tokens.size();
    EXPECT_GT(tokens, 20u);
}

// Chunks on both sides of the matrix-vector limit, so the encoder projection's two products run.
TEST(DecoderBatchPlans, ChunksFallOnBothSidesOfTheMatrixVectorLimit) {
    bool few = false, many = false;
    for (const auto& plan : kPlans)
        for (const int64_t n : plan) {
            few |= n > 0 && n <= pk::kernels::kMatvecMaxRows;
            many |= n > pk::kernels::kMatvecMaxRows;
        }
    EXPECT_TRUE(few && many);
}

INSTANTIATE_TEST_SUITE_P(Files, DecoderBatch,
                         ::testing::Values("ca_rnnt_multi/model.gguf", "ca_rnnt_multi/model-f16.gguf",
                                           "ca_rnnt_multi/model-q8_0.gguf", "ca_tdt/model.gguf"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                             std::string name = info.param.substr(0, info.param.find('.'));
                             for (char& c : name)
                                 if (c == '-' || c == '/') c = '_';
                             return name;
                         });

}  // namespace
