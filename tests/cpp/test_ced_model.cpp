// The CED sound tagger against its references (tests/data/ced) at every ISA level: the dB mel
// front end against float64 arithmetic and torchaudio, the class probabilities against the
// PyTorch reference to 1e-4, and bitwise-equal results at any thread count within a level.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <utility>
#include <string>
#include <vector>

#include "ced_fixtures.h"
#include "common/errors.h"
#include "isa_levels.h"
#include "model/sound/ced_model.h"
#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace {

std::unique_ptr<pk::CedModel> load_at(pk::IsaLevel level) {
    return pk::CedModel::load(pk::GgufReader::open(ced_fixtures::model_path()), isa_test::load_options_at(level));
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float tol) {
    ASSERT_EQ(got.size(), want.size());
    ASSERT_FALSE(want.empty());
    float worst = 0.f;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
    EXPECT_LE(worst, tol);
}

class CedModelTest : public isa_test::LevelTest {};

// The largest |got - want| over the bins within `depth` dB of want's loudest one, and over the
// others. A float32 FFT's rounding is relative to the loudest bin, so the quiet bins' dB are
// the least exact in any float32 front end (torchaudio's too).
std::pair<float, float> worst_by_depth(const std::vector<float>& got, const std::vector<float>& want, float depth) {
    EXPECT_EQ(got.size(), want.size());
    const float loudest = *std::max_element(want.begin(), want.end());
    std::pair<float, float> worst{0.f, 0.f};
    for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
        float& w = want[i] >= loudest - depth ? worst.first : worst.second;
        w = std::max(w, std::fabs(got[i] - want[i]));
    }
    return worst;
}

TEST_P(CedModelTest, FrontEndMatchesFloat64AndTorchaudio) {
    const auto ced = load_at(level());
    pk::ThreadTeam team(2);
    for (const std::string& clip : ced_fixtures::clips()) {
        SCOPED_TRACE(clip);
        const std::vector<float> pcm = ced_fixtures::samples(clip);
        const std::vector<float> db = ced->frontend().compute(team, pcm.data(), static_cast<int64_t>(pcm.size()));
        EXPECT_EQ(db.size(), 64u * static_cast<size_t>(ced->frontend().frames(static_cast<int64_t>(pcm.size()))));
        const auto exact = worst_by_depth(db, ced_fixtures::floats("clip_" + clip + ".db64.f32"), 50.f);
        EXPECT_LE(exact.first, 1e-4f);
        EXPECT_LE(exact.second, 1e-3f);
        // torchaudio's float32 result is itself up to 1.3e-4 dB from the float64 one.
        const auto torchaudio = worst_by_depth(db, ced_fixtures::floats("clip_" + clip + ".db.f32"), 50.f);
        EXPECT_LE(torchaudio.first, 2e-4f);
        EXPECT_LE(torchaudio.second, 1e-3f);
    }
}

TEST_P(CedModelTest, ScoresMatchThePyTorchReference) {
    const auto ced = load_at(level());
    EXPECT_EQ(ced->config().n_classes, 10);
    EXPECT_EQ(ced->labels()[3], "Doorbell");
    pk::ThreadTeam team(2);
    pk::Arena arena;
    for (const std::string& clip : ced_fixtures::clips()) {
        SCOPED_TRACE(clip);
        const std::vector<float> pcm = ced_fixtures::samples(clip);
        expect_near_all(ced->classify(team, arena, pcm.data(), static_cast<int64_t>(pcm.size())),
                        ced_fixtures::floats("clip_" + clip + ".scores.f32"), 1e-4f);
    }
}

TEST_P(CedModelTest, ThreadCountDoesNotChangeABit) {
    const auto ced = load_at(level());
    const std::vector<float> pcm = ced_fixtures::samples("long");
    std::vector<float> first;
    for (int threads : {1, 2, 3, 4}) {
        pk::ThreadTeam team(threads);
        pk::Arena arena;
        std::vector<float> scores = ced->classify(team, arena, pcm.data(), static_cast<int64_t>(pcm.size()));
        const std::vector<float> db = ced->frontend().compute(team, pcm.data(), static_cast<int64_t>(pcm.size()));
        scores.insert(scores.end(), db.begin(), db.end());
        if (first.empty()) first = scores;
        else EXPECT_EQ(scores, first) << threads << " threads";
    }
}

INSTANTIATE_ISA_LEVELS(CedModelTest);

TEST(CedModel, RefusesAClipShorterThanAPatch) {
    const auto ced = load_at(isa_test::highest_level());
    EXPECT_EQ(ced->min_samples(), 2400);
    const std::vector<float> pcm(2399, 0.1f);
    pk::ThreadTeam team(1);
    pk::Arena arena;
    EXPECT_THROW(ced->classify(team, arena, pcm.data(), 2399), pk::InvalidArgument);
    const std::vector<float> ok(2400, 0.1f);
    EXPECT_EQ(ced->classify(team, arena, ok.data(), 2400).size(), 10u);
}

}  // namespace
