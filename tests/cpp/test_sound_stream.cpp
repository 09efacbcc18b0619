// The sound stream's rules (model/sound/sound_stream.h) on constructed score sequences: a
// scripted scorer gives each window's scores, so opening, holding, closing, the minimum
// duration, is_last and the drained scores are checked exactly, apart from the network.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "common/errors.h"
#include "model/sound/sound_stream.h"

namespace {

constexpr int kRate = 100;  // samples per second: the rules are in seconds, any rate will do

// Scores window i (in scoring order) with script[i]; records each window's length.
struct Script {
    std::vector<std::vector<float>> scores;
    std::vector<int64_t> lengths;
    pk::SoundScorer scorer() {
        return [this](const float*, int64_t n) {
            lengths.push_back(n);
            return scores.at(lengths.size() - 1);
        };
    }
};

// The defaults, but top_k 1: top_k may not exceed the (one or two) classes of these scripts.
pk::SoundOptions defaults() {
    pk::SoundOptions o;
    o.top_k = 1;
    return o;
}

std::vector<float> silence(double seconds) { return std::vector<float>(static_cast<size_t>(seconds * kRate), 0.f); }

TEST(SoundStream, ASoundOpensHoldsAndCloses) {
    // Class 0 rises in the 0-2 s window, peaks at 0-3, holds above off at 1-4, drops at 2-5.
    Script s{{{0.1f, 0}, {0.5f, 0}, {0.6f, 0}, {0.35f, 0}, {0.2f, 0}, {0.1f, 0}}};
    pk::SoundStream stream(s.scorer(), 2, kRate, defaults());
    const std::vector<float> a = silence(3.5);
    EXPECT_TRUE(stream.feed(a.data(), static_cast<int64_t>(a.size()), false).empty());
    ASSERT_EQ(stream.active().size(), 1u);
    EXPECT_DOUBLE_EQ(stream.active()[0].start, 1.0);  // max(ws 0, we 2 - hop 1)
    EXPECT_FLOAT_EQ(stream.active()[0].peak, 0.6f);
    const std::vector<float> b = silence(1.5);
    const std::vector<pk::SoundSegment> closed = stream.feed(b.data(), static_cast<int64_t>(b.size()), false);
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_EQ(closed[0].class_index, 0);
    EXPECT_DOUBLE_EQ(closed[0].start, 1.0);
    EXPECT_DOUBLE_EQ(closed[0].end, 3.0);  // min(ws 2 + hop 1, we 5)
    EXPECT_FLOAT_EQ(closed[0].peak, 0.6f);
    EXPECT_TRUE(stream.active().empty());
    // Windows 0-1, 0-2, 0-3, then 3 s each.
    EXPECT_EQ(s.lengths, (std::vector<int64_t>{100, 200, 300, 300, 300}));
}

TEST(SoundStream, ChunkSizesDoNotMatter) {
    // Segments [0, 1] and [3, 4].
    const std::vector<std::vector<float>> script = {{0.5f}, {0.5f}, {0.1f}, {0.9f}, {0.9f}, {0.1f}};
    Script whole{script}, pieces{script};
    pk::SoundStream a(whole.scorer(), 1, kRate, defaults()), b(pieces.scorer(), 1, kRate, defaults());
    const std::vector<float> x = silence(6.0);
    const auto one = a.feed(x.data(), 600, false);
    std::vector<pk::SoundSegment> many;
    for (int64_t i = 0; i < 600; i += 37) {
        const auto part = b.feed(x.data() + i, std::min<int64_t>(37, 600 - i), false);
        many.insert(many.end(), part.begin(), part.end());
    }
    ASSERT_EQ(one.size(), 2u);
    ASSERT_EQ(many.size(), 2u);
    EXPECT_DOUBLE_EQ(one[1].start, 3.0);
    EXPECT_DOUBLE_EQ(one[1].end, 4.0);
    for (size_t i = 0; i < 2; ++i) {
        EXPECT_DOUBLE_EQ(one[i].start, many[i].start);
        EXPECT_DOUBLE_EQ(one[i].end, many[i].end);
    }
    EXPECT_EQ(whole.lengths, pieces.lengths);
}

TEST(SoundStream, ASoundShorterThanTheMinimumIsDropped) {
    // Opens at 0-1 (start 0), closes at 0-2 (end min(0 + 1, 2) = 1): 1 s long.
    for (float min_duration : {1.5f, 1.0f}) {
        Script s{{{0.9f}, {0.0f}}};
        pk::SoundOptions o = defaults();
        o.min_duration_sec = min_duration;
        pk::SoundStream stream(s.scorer(), 1, kRate, o);
        const std::vector<float> x = silence(2.0);
        EXPECT_EQ(stream.feed(x.data(), 200, false).size(), min_duration > 1.0f ? 0u : 1u) << min_duration;
    }
}

TEST(SoundStream, IsLastScoresTheTailAndClosesAtTheEnd) {
    Script s{{{0.1f}, {0.1f}, {0.1f}, {0.1f}, {0.8f}}};
    pk::SoundStream stream(s.scorer(), 1, kRate, defaults());
    const std::vector<float> x = silence(4.5);
    const auto closed = stream.feed(x.data(), 450, true);
    EXPECT_EQ(s.lengths, (std::vector<int64_t>{100, 200, 300, 300, 300}));  // the tail is 1.5-4.5 s
    ASSERT_EQ(closed.size(), 1u);
    EXPECT_DOUBLE_EQ(closed[0].start, 3.5);  // max(1.5, 4.5 - 1)
    EXPECT_DOUBLE_EQ(closed[0].end, 4.5);
    EXPECT_THROW(stream.feed(x.data(), 10, false), pk::InvalidArgument);
    // Less than 0.16 s unscored: no tail window.
    Script t{{{0.1f}, {0.1f}}};
    pk::SoundStream short_tail(t.scorer(), 1, kRate, defaults());
    short_tail.feed(x.data(), 215, true);
    EXPECT_EQ(t.lengths.size(), 2u);
}

TEST(SoundStream, DrainGivesEachWindowsTopK) {
    Script s{{{0.1f, 0.7f, 0.3f}, {0.9f, 0.2f, 0.3f}}};
    pk::SoundOptions o;
    o.top_k = 2;
    pk::SoundStream stream(s.scorer(), 3, kRate, o);
    const std::vector<float> x = silence(2.0);
    stream.feed(x.data(), 200, false);
    const auto windows = stream.drain_scores();
    ASSERT_EQ(windows.size(), 2u);
    EXPECT_DOUBLE_EQ(windows[1].start, 0.0);
    EXPECT_DOUBLE_EQ(windows[1].end, 2.0);
    EXPECT_EQ(windows[0].top, (std::vector<std::pair<int, float>>{{1, 0.7f}, {2, 0.3f}}));
    EXPECT_EQ(windows[1].top, (std::vector<std::pair<int, float>>{{0, 0.9f}, {2, 0.3f}}));
    EXPECT_TRUE(stream.drain_scores().empty());
    o.top_k = 0;
    Script none{{{0.1f, 0.7f, 0.3f}}};
    pk::SoundStream quiet(none.scorer(), 3, kRate, o);
    quiet.feed(x.data(), 100, false);
    EXPECT_TRUE(quiet.drain_scores().empty());
}

TEST(SoundStream, OptionsAreValidated) {
    const auto message = [](pk::SoundOptions o) -> std::string {
        try {
            pk::validate_sound_options(o, 10);
        } catch (const pk::InvalidArgument& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(message(pk::SoundOptions{}), "");
    pk::SoundOptions o;
    o.hop_sec = 0.1f;
    EXPECT_EQ(message(o), "invalid sound options: hop_sec must be at least 0.2");
    o = {};
    o.window_sec = 11.f;
    EXPECT_EQ(message(o), "invalid sound options: window_sec must be between hop_sec and 10");
    o = {};
    o.off_threshold = 0.5f;
    EXPECT_EQ(message(o), "invalid sound options: thresholds must satisfy 0 <= off_threshold <= on_threshold <= 1");
    o = {};
    o.min_duration_sec = -1.f;
    EXPECT_EQ(message(o), "invalid sound options: min_duration_sec must not be negative");
    o = {};
    o.top_k = 11;
    EXPECT_EQ(message(o), "invalid sound options: top_k must be between 0 and the number of classes");
}

}  // namespace
