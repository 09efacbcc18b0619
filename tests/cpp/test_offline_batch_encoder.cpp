// FastConformerEncoder::forward_batch, the batched offline encoder pass: each utterance's output
// has the bits FastConformerEncoder::forward gives it alone, in batches of 1, 2, 3 and all
// utterances, in two orders, for lengths on both sides of every row limit that picks a
// product's kernels (kernels::kMatvecMaxRows frames; a last subsampling chunk or a last layer
// chunk of at most that many frames), with full, local and auto attention (auto turns local
// past kAutoFullMaxFrames) and the chunked attention of a cache-aware model (causal convs). For
// the f32, f16 and q8_0 files of fixture models, at every ISA level this CPU has, at 1 and 2
// threads.
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

using pk::AttentionSetting;

// One utterance of the test: its encoder frames and attention.
struct Utterance {
    int64_t frames;
    AttentionSetting attention;
};

// Lengths around the kernels' row limits: at most kMatvecMaxRows (4) frames; 33 and 36, whose
// last subsampling chunk (32 frames) is 1 and 4 frames; 514, whose last layer chunk (512 rows)
// is 2 frames; 620, past kAutoFullMaxFrames.
std::vector<Utterance> offline_utterances() {
    return {{37, AttentionSetting::automatic()},  {1, AttentionSetting::automatic()},
            {514, AttentionSetting::automatic()}, {3, AttentionSetting::local(4, 2)},
            {33, AttentionSetting::full()},       {620, AttentionSetting::automatic()},
            {4, AttentionSetting::automatic()},   {36, AttentionSetting::local(3, 5)},
            {515, AttentionSetting::local(8, 8)}, {5, AttentionSetting::full()}};
}

// A cache-aware model's offline pass: the chunked attention of each of its contexts.
std::vector<Utterance> chunked_utterances(const pk::Model& m) {
    std::vector<Utterance> u;
    const std::vector<int64_t> frames = {2, 37, 514, 4, 33, 6};
    for (size_t i = 0; i < frames.size(); ++i) {
        const pk::AttContext& c = m.config().enc.att_contexts[i % m.config().enc.att_contexts.size()];
        u.push_back({frames[i], AttentionSetting::chunked(c.left, c.right)});
    }
    return u;
}

// The fewest mel frames that give `frames` encoder frames.
int64_t mel_frames_for(const pk::FastConformerEncoder& enc, int64_t frames) {
    int64_t mel = 1;
    while (enc.output_frames(mel) < frames) ++mel;
    return mel;
}

bool same_bits(const float* a, const float* b, int64_t n) { return std::memcmp(a, b, n * sizeof(float)) == 0; }

void expect_batches_match(const pk::Model& model, const std::vector<Utterance>& plan) {
    const pk::FastConformerEncoder& enc = model.encoder();
    const int64_t n_mels = model.config().pre.n_mels, d = enc.d_model();
    std::vector<std::vector<float>> mels, alone;
    for (size_t i = 0; i < plan.size(); ++i) {
        const int64_t mel = mel_frames_for(enc, plan[i].frames);
        ASSERT_EQ(enc.output_frames(mel), plan[i].frames);
        mels.push_back(random_mel(mel, n_mels, static_cast<uint32_t>(100 + i)));
    }
    for (const int threads : {1, 2}) {
        pk::ThreadTeam team(threads);
        pk::Arena arena;
        alone.clear();
        for (size_t i = 0; i < plan.size(); ++i) {
            alone.emplace_back(static_cast<size_t>(plan[i].frames * d));
            enc.forward(team, arena, mels[i].data(), static_cast<int64_t>(mels[i].size()) / n_mels,
                        alone.back().data(), plan[i].attention);
        }
        std::vector<size_t> reversed;
        for (size_t i = plan.size(); i-- > 0;) reversed.push_back(i);
        std::vector<size_t> in_order(reversed.rbegin(), reversed.rend());
        for (const std::vector<size_t>* order : {&in_order, &reversed}) {
            for (const size_t n : {size_t{1}, size_t{2}, size_t{3}, plan.size()}) {
                std::vector<pk::EncoderUtterance> batch;
                int64_t rows = 0;
                for (size_t j = 0; j < n; ++j) {
                    const std::vector<float>& mel = mels[(*order)[j]];
                    batch.push_back({mel.data(), static_cast<int64_t>(mel.size()) / n_mels,
                                     plan[(*order)[j]].attention});
                    rows += plan[(*order)[j]].frames;
                }
                std::vector<float> out(static_cast<size_t>(rows * d));
                enc.forward_batch(team, arena, batch, out.data());
                for (size_t j = 0; j < n; ++j) {
                    const size_t u = (*order)[j];
                    ASSERT_EQ(batch[j].frames, plan[u].frames);
                    EXPECT_TRUE(same_bits(out.data() + batch[j].row * d, alone[u].data(), plan[u].frames * d))
                        << "utterance " << u << " (" << plan[u].frames << " frames, "
                        << plan[u].attention.describe() << ") in a batch of " << n << " at " << threads
                        << " threads";
                }
            }
        }
    }
}

class OfflineBatchEncoder : public ::testing::TestWithParam<std::string> {};

TEST_P(OfflineBatchEncoder, EveryUtteranceGetsItsBitsAlone) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        expect_batches_match(batch_test::model_file("rnnt/" + GetParam(), isa), offline_utterances());
    });
}

TEST_P(OfflineBatchEncoder, ChunkedAttentionOfACacheAwareModel) {
    isa_test::for_each_level([&](pk::IsaLevel isa) {
        const pk::Model& model = batch_test::model_file("ca_rnnt_multi/" + GetParam(), isa);
        ASSERT_TRUE(model.encoder().config().causal_conv);
        expect_batches_match(model, chunked_utterances(model));
    });
}

// The lengths reach every kind of row, or the test would not cover what it says.
TEST(OfflineBatchEncoderPlan, LengthsFallOnBothSidesOfEveryRowLimit) {
    constexpr int64_t limit = pk::kernels::kMatvecMaxRows, sub = pk::DwStridingSubsampling::kChunkFrames,
                      layer = pk::ConformerLayer::kRowChunk;
    bool few = false, sub_tail = false, layer_tail = false, auto_local = false;
    for (const Utterance& u : offline_utterances()) {
        few |= u.frames <= limit;
        sub_tail |= u.frames > sub && u.frames % sub <= limit;
        layer_tail |= u.frames > layer && u.frames % layer <= limit;
        auto_local |= u.attention.mode == AttentionSetting::Mode::Auto &&
                      u.attention.resolve(u.frames).mode == AttentionSetting::Mode::Local;
    }
    EXPECT_TRUE(few && sub_tail && layer_tail && auto_local);
}

INSTANTIATE_MODEL_FILES(OfflineBatchEncoder);

}  // namespace
