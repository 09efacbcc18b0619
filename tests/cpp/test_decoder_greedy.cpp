// The greedy search rules (NeMo 3.0.0 GreedyTDTInfer / GreedyRNNTInfer / CTC greedy) checked
// against scripted joint outputs, and the max_prob confidence formula.
#include <gtest/gtest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "model/decoder/confidence.h"
#include "model/decoder/greedy_ctc.h"
#include "model/decoder/greedy_rnnt.h"
#include "model/decoder/greedy_tdt.h"

namespace {

constexpr int kBlank = 6;  // vocabulary of 6 tokens, blank = 6
const std::vector<int> kDurations = {0, 1, 2, 3, 4};

// Replies to joint() calls from a script of (token, duration index) pairs, in order, and
// records the frame of every call and every emitted token.
class ScriptedSteps : public pk::TransducerSteps {
public:
    struct Reply {
        int token;
        int duration_index;  // ignored for RNN-T
    };
    ScriptedSteps(std::vector<Reply> script, int n_durations) : script_(std::move(script)), n_durations_(n_durations) {}

    const float* joint(int frame) override {
        frames.push_back(frame);
        logits_.assign(static_cast<size_t>(kBlank + 1 + n_durations_), 0.0f);
        if (next_ >= script_.size()) {
            ADD_FAILURE() << "joint called more often than scripted, at frame " << frame;
            logits_[kBlank] = 1.0f;
            if (n_durations_ > 0) logits_[kBlank + 2] = 1.0f;
            return logits_.data();
        }
        const Reply r = script_[next_++];
        logits_[static_cast<size_t>(r.token)] = 5.0f;
        if (n_durations_ > 0) logits_[static_cast<size_t>(kBlank + 1 + r.duration_index)] = 1.0f;
        return logits_.data();
    }
    void emit(int token) override { emitted.push_back(token); }

    bool script_used_up() const { return next_ == script_.size(); }

    std::vector<int> frames;
    std::vector<int> emitted;

private:
    std::vector<Reply> script_;
    int n_durations_;
    size_t next_ = 0;
    std::vector<float> logits_;
};

pk::GreedyOptions tdt_options(int max_symbols) {
    pk::GreedyOptions o;
    o.blank_id = kBlank;
    o.durations = kDurations;
    o.max_symbols = max_symbols;
    return o;
}

// Duration index = duration in frames for kDurations.
std::vector<std::pair<int, int>> ids_frames(const std::vector<pk::TranscriptToken>& t) {
    std::vector<std::pair<int, int>> out;
    for (const auto& x : t) out.emplace_back(x.id, x.frame);
    return out;
}

using Pairs = std::vector<std::pair<int, int>>;

TEST(GreedyTdt, EmitsAtTheSameFrameWhileDurationIsZeroAndJumpsByDuration) {
    ScriptedSteps s({{3, 0}, {5, 1}, {kBlank, 2}, {2, 1}, {kBlank, 4}}, 5);
    const auto out = pk::greedy_tdt(s, 5, tdt_options(10));
    EXPECT_EQ(ids_frames(out), (Pairs{{3, 0}, {5, 0}, {2, 3}}));
    ASSERT_EQ(out.size(), 3u);
    EXPECT_EQ(out[0].duration, 0);
    EXPECT_EQ(out[1].duration, 1);
    EXPECT_EQ(out[2].duration, 1);
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 1, 3, 4}));
    EXPECT_EQ(s.emitted, (std::vector<int>{3, 5, 2}));  // a blank never advances the state
    EXPECT_TRUE(s.script_used_up());
}

TEST(GreedyTdt, MaxSymbolsCapAdvancesOneExtraFrame) {
    // Three symbols at frame 0 with duration 0 hit the cap: t moves 0 + 1.
    ScriptedSteps s({{1, 0}, {2, 0}, {3, 0}, {4, 1}}, 5);
    const auto out = pk::greedy_tdt(s, 2, tdt_options(3));
    EXPECT_EQ(ids_frames(out), (Pairs{{1, 0}, {2, 0}, {3, 0}, {4, 1}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 0, 1}));
    EXPECT_TRUE(s.script_used_up());
}

TEST(GreedyTdt, CapReachedByAStepWithDurationAddsOneMoreFrame) {
    // The third symbol at frame 0 has duration 2: NeMo moves 2 and then 1 more for the cap.
    ScriptedSteps s({{1, 0}, {2, 0}, {3, 2}, {4, 1}}, 5);
    const auto out = pk::greedy_tdt(s, 4, tdt_options(3));
    EXPECT_EQ(ids_frames(out), (Pairs{{1, 0}, {2, 0}, {3, 0}, {4, 3}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 0, 3}));
    EXPECT_TRUE(s.script_used_up());
}

TEST(GreedyTdt, GreedyBatchLoopAddsNoFrameWhenTheCappingTokenJumps) {
    // NeMo's label-looping loop forces a frame only while still on the capped frame.
    ScriptedSteps s({{1, 0}, {2, 0}, {3, 2}, {4, 1}, {kBlank, 1}}, 5);
    pk::GreedyOptions o = tdt_options(3);
    o.tdt_loop = pk::TdtLoop::GreedyBatch;
    const auto out = pk::greedy_tdt(s, 4, o);
    EXPECT_EQ(ids_frames(out), (Pairs{{1, 0}, {2, 0}, {3, 0}, {4, 2}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 0, 2, 3}));
    EXPECT_TRUE(s.script_used_up());
    // ...and still adds it when the cap is reached on the frame (all durations 0).
    ScriptedSteps z({{1, 0}, {2, 0}, {3, 0}, {4, 1}}, 5);
    EXPECT_EQ(ids_frames(pk::greedy_tdt(z, 2, o)), (Pairs{{1, 0}, {2, 0}, {3, 0}, {4, 1}}));
}

TEST(GreedyTdt, CapCountsBlankStepsOfTheVisitToo) {
    // A token with duration 0, then a blank with duration 1: with max_symbols 2 the blank is
    // the visit's second step, so the cap adds one frame (NeMo counts every step).
    ScriptedSteps s({{1, 0}, {kBlank, 1}, {2, 1}}, 5);
    const auto out = pk::greedy_tdt(s, 3, tdt_options(2));
    EXPECT_EQ(ids_frames(out), (Pairs{{1, 0}, {2, 2}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 2}));
}

TEST(GreedyTdt, BlankWithDurationZeroAdvancesOneFrame) {
    // NeMo repeats the identical blank step until max_symbols, then moves one frame.
    ScriptedSteps s({{4, 0}, {kBlank, 0}, {kBlank, 0}, {5, 2}}, 5);
    const auto out = pk::greedy_tdt(s, 3, tdt_options(10));
    EXPECT_EQ(ids_frames(out), (Pairs{{4, 0}, {5, 2}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 1, 2}));
    EXPECT_TRUE(s.script_used_up());
}

TEST(GreedyTdt, UnlimitedSymbolsStillTerminatesOnBlankWithDurationZero) {
    ScriptedSteps s({{kBlank, 0}, {kBlank, 0}}, 5);
    const auto out = pk::greedy_tdt(s, 2, tdt_options(0));
    EXPECT_TRUE(out.empty());
    EXPECT_EQ(s.frames, (std::vector<int>{0, 1}));
}

TEST(GreedyTdt, JumpPastTheEndStopsAndZeroFramesDoNothing) {
    ScriptedSteps s({{1, 4}}, 5);
    EXPECT_EQ(ids_frames(pk::greedy_tdt(s, 3, tdt_options(10))), (Pairs{{1, 0}}));
    ScriptedSteps none({}, 5);
    EXPECT_TRUE(pk::greedy_tdt(none, 0, tdt_options(10)).empty());
    EXPECT_TRUE(none.frames.empty());
}

TEST(GreedyTdt, TokenArgmaxIgnoresDurationLogits) {
    // A huge duration logit must not be taken for a token (argmax over the first V+1 only).
    class Steps : public pk::TransducerSteps {
    public:
        const float* joint(int) override {
            logits = std::vector<float>(kBlank + 1 + 5, 0.0f);
            logits[2] = 1.0f;
            logits[kBlank + 1 + 3] = 100.0f;  // duration 3
            return logits.data();
        }
        void emit(int) override {}
        std::vector<float> logits;
    } s;
    const auto out = pk::greedy_tdt(s, 2, tdt_options(10));
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].id, 2);
    EXPECT_EQ(out[0].duration, 3);
    // Confidence over the 7 token logits only: p = e / (e + 6).
    const double p = std::exp(1.0) / (std::exp(1.0) + 6.0);
    EXPECT_NEAR(out[0].confidence, (7.0 * p - 1.0) / 6.0, 1e-6);
}

TEST(GreedyRnnt, EmitsUntilBlankThenMovesOneFrame) {
    ScriptedSteps s({{3, 0}, {4, 0}, {kBlank, 0}, {kBlank, 0}, {1, 0}, {kBlank, 0}}, 0);
    pk::GreedyOptions o;
    o.blank_id = kBlank;
    o.max_symbols = 10;
    const auto out = pk::greedy_rnnt(s, 3, o);
    EXPECT_EQ(ids_frames(out), (Pairs{{3, 0}, {4, 0}, {1, 2}}));
    for (const auto& t : out) EXPECT_EQ(t.duration, 1);
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 0, 1, 2, 2}));
    EXPECT_EQ(s.emitted, (std::vector<int>{3, 4, 1}));
    EXPECT_TRUE(s.script_used_up());
}

TEST(GreedyRnnt, MaxSymbolsMovesToTheNextFrameWithoutExtraAdvance) {
    ScriptedSteps s({{1, 0}, {2, 0}, {3, 0}, {kBlank, 0}}, 0);
    pk::GreedyOptions o;
    o.blank_id = kBlank;
    o.max_symbols = 2;
    const auto out = pk::greedy_rnnt(s, 2, o);
    EXPECT_EQ(ids_frames(out), (Pairs{{1, 0}, {2, 0}, {3, 1}}));
    EXPECT_EQ(s.frames, (std::vector<int>{0, 0, 1, 1}));
    EXPECT_TRUE(s.script_used_up());
}

// CTC over 4 classes (blank = 3), one-hot-ish rows.
std::vector<float> ctc_rows(const std::vector<int>& labels, float peak) {
    std::vector<float> x(labels.size() * 4, 0.0f);
    for (size_t t = 0; t < labels.size(); ++t) x[t * 4 + static_cast<size_t>(labels[t])] = peak + 0.1f * t;
    return x;
}

TEST(GreedyCtc, CollapsesRunsDropsBlanksAndKeepsTheFirstFrame) {
    const std::vector<int> labels = {3, 0, 0, 1, 3, 1, 2, 2, 2, 3, 0};
    const std::vector<float> x = ctc_rows(labels, 2.0f);
    const auto out = pk::greedy_ctc(x.data(), static_cast<int>(labels.size()), 4, {});
    EXPECT_EQ(ids_frames(out), (Pairs{{0, 1}, {1, 3}, {1, 5}, {2, 6}, {0, 10}}));
    const std::vector<int> durations = {2, 1, 1, 3, 1};
    for (size_t i = 0; i < out.size(); ++i) EXPECT_EQ(out[i].duration, durations[i]);
    // Confidence of a run = the minimum of its frames' confidences: the first frame of a run
    // has the smallest peak here.
    for (const auto& tok : out) {
        const float* row = x.data() + tok.frame * 4;
        EXPECT_EQ(tok.confidence, pk::max_prob_confidence(row, 4, {}));
    }
}

TEST(GreedyCtc, OnlyTheFirstNFramesAreRead) {
    const std::vector<float> x = ctc_rows({0, 3, 1}, 2.0f);
    EXPECT_EQ(ids_frames(pk::greedy_ctc(x.data(), 2, 4, {})), (Pairs{{0, 0}}));
    EXPECT_TRUE(pk::greedy_ctc(x.data(), 0, 4, {}).empty());
}

TEST(Confidence, MaxProbMatchesTheFormula) {
    const float logits[5] = {0.5f, -1.0f, 2.0f, 0.0f, 1.25f};
    double sum = 0;
    for (float v : logits) sum += std::exp(static_cast<double>(v));
    const double p = std::exp(2.0) / sum;
    EXPECT_NEAR(pk::max_prob_confidence(logits, 5, {}), (5 * p - 1) / 4, 1e-7);
    // alpha != 1: (N^a p^a - 1) / (N^a - 1).
    const double a = 0.33;
    const double na = std::pow(5.0, a);
    EXPECT_NEAR(pk::max_prob_confidence(logits, 5, {0.33f}), (na * std::pow(p, a) - 1) / (na - 1), 1e-6);
}

TEST(Confidence, UniformIsZeroAndCertainIsOne) {
    const std::vector<float> uniform(1025, 0.7f);
    EXPECT_NEAR(pk::max_prob_confidence(uniform.data(), 1025, {}), 0.0f, 1e-6);
    std::vector<float> peaked(1025, -50.0f);
    peaked[17] = 50.0f;
    EXPECT_NEAR(pk::max_prob_confidence(peaked.data(), 1025, {}), 1.0f, 1e-6);
    // Shift invariance: confidence depends on the softmax only.
    const float a[3] = {1.0f, 2.0f, 3.0f};
    const float b[3] = {101.0f, 102.0f, 103.0f};
    EXPECT_NEAR(pk::max_prob_confidence(a, 3, {}), pk::max_prob_confidence(b, 3, {}), 1e-6);
}

}  // namespace
