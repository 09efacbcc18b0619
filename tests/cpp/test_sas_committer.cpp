// The speaker-attributed stream's commit rule (model/sas/sas_committer.h) with a stand-in
// transcriber that "hears" a known list of words: it reads the window's absolute start off the
// samples (each sample holds its own index) and returns the words lying inside the window. So
// the answer of each case is known: nothing before 4 s up to the diarized edge, words ending 1 s
// before the window's end commit, the release without a commit, the re-heard first word, the
// last feed, and every word once for any cut of the audio into feeds.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "model/sas/sas_committer.h"

namespace {

constexpr int kRate = 100;  // samples per second: times are exact multiples of 0.01 s

pk::TranscriptWord word(const std::string& text, double start, double end) {
    pk::TranscriptWord w;
    w.text = text;
    w.start_sec = start;
    w.end_sec = end;
    return w;
}

struct Heard {
    std::vector<pk::TranscriptWord> words;  // absolute times
    int calls = 0;
    // Also hear a word that straddles the window's start (as an ASR model may hear the tail of
    // a word cut in two) under this text.
    std::string straddling_as;

    pk::SasCommitter::Transcriber fn() {
        return [this](const float* s, int64_t n) {
            ++calls;
            const double t0 = static_cast<double>(s[0]) / kRate, t1 = t0 + static_cast<double>(n) / kRate;
            std::vector<pk::TranscriptWord> out;
            for (const pk::TranscriptWord& w : words) {
                const bool inside = w.start_sec >= t0 - 1e-9 && w.end_sec <= t1 + 1e-9;
                const bool straddles = !straddling_as.empty() && w.start_sec < t0 && w.end_sec > t0 + 0.05;
                if (inside || straddles)
                    out.push_back(word(straddles ? straddling_as : w.text, std::max(w.start_sec, t0) - t0,
                                       w.end_sec - t0));
            }
            return out;
        };
    }
};

std::vector<float> indices(int64_t from, int64_t to) {
    std::vector<float> v;
    for (int64_t i = from; i < to; ++i) v.push_back(static_cast<float>(i));
    return v;
}

void append(pk::SasCommitter& c, int64_t from, int64_t to) {
    const std::vector<float> v = indices(from, to);
    c.append(v.data(), static_cast<int64_t>(v.size()));
}

std::vector<std::string> texts(const std::vector<pk::TranscriptWord>& w) {
    std::vector<std::string> out;
    for (const auto& x : w) out.push_back(x.text);
    return out;
}

TEST(SasCommitter, NothingRunsBeforeFourSecondsUpToTheDiarizedEdge) {
    Heard h{{word("a", 0.5, 0.9), word("b", 1.0, 1.4)}};
    pk::SasCommitter c(kRate, h.fn());
    append(c, 0, 390);
    EXPECT_TRUE(c.commit(3.9, false).empty());
    append(c, 390, 1000);  // 10 s buffered, but diarized only to 3.5 s
    EXPECT_TRUE(c.commit(3.5, false).empty());
    EXPECT_EQ(h.calls, 0);
    EXPECT_EQ(texts(c.commit(4.0, false)), (std::vector<std::string>{"a", "b"}));
    EXPECT_EQ(h.calls, 1);
}

TEST(SasCommitter, WordsEndingASecondBeforeTheWindowEndCommitAndTheNextWindowStartsAfterThem) {
    Heard h{{word("a", 0.5, 1.0), word("b", 2.0, 3.0), word("c", 3.2, 3.6), word("d", 4.5, 5.0)}};
    pk::SasCommitter c(kRate, h.fn());
    append(c, 0, 400);
    // Window [0, 4): limit 3.0 — "b" ends exactly there and commits, "c" does not.
    EXPECT_EQ(texts(c.commit(4.0, false)), (std::vector<std::string>{"a", "b"}));
    EXPECT_DOUBLE_EQ(c.window_start_sec(), 3.0);
    append(c, 400, 700);
    // [3, 7): limit 6.0: "c", "d".
    EXPECT_EQ(texts(c.commit(7.0, false)), (std::vector<std::string>{"c", "d"}));
    EXPECT_DOUBLE_EQ(c.window_start_sec(), 5.0);
}

TEST(SasCommitter, WithoutACommitTheAudioUpToTheFirstWordMinusAThirdOfASecondIsReleased) {
    Heard h{{word("long", 2.0, 3.6)}};
    pk::SasCommitter c(kRate, h.fn());
    append(c, 0, 400);
    EXPECT_TRUE(c.commit(4.0, false).empty());  // ends 0.6 s after the 3.0 s limit
    EXPECT_DOUBLE_EQ(c.window_start_sec(), 1.7);
    // Silence: released up to the limit minus 0.3 s.
    Heard quiet{{}};
    pk::SasCommitter q(kRate, quiet.fn());
    append(q, 0, 500);
    EXPECT_TRUE(q.commit(5.0, false).empty());
    EXPECT_DOUBLE_EQ(q.window_start_sec(), 3.7);
}

// A transcriber that hears "cut" [2.6, 3.0] in the first window and, in any later window, the
// word `again` right at the window's start (the tail of "cut" heard a second time, as an ASR
// model does when a word's end time comes out early), then "next" [4.0, 4.4].
pk::SasCommitter::Transcriber hears_again(const std::string& again, double again_at) {
    return [again, again_at](const float* s, int64_t n) {
        const double t0 = static_cast<double>(s[0]) / kRate;
        std::vector<pk::TranscriptWord> out;
        if (t0 == 0.0) {
            out.push_back(word("cut", 2.6, 3.0));
        } else {
            out.push_back(word(again, again_at - t0, again_at - t0 + 0.1));
            out.push_back(word("next", 4.0 - t0, 4.4 - t0));
        }
        (void)n;
        return out;
    };
}

std::vector<std::string> second_window(const std::string& again, double again_at) {
    pk::SasCommitter c(kRate, hears_again(again, again_at));
    append(c, 0, 400);
    EXPECT_EQ(texts(c.commit(4.0, false)), (std::vector<std::string>{"cut"}));  // [0, 4), limit 3.0
    append(c, 400, 800);
    return texts(c.commit(8.0, false));  // [3.0, 8.0)
}

TEST(SasCommitter, AFirstWordHeardAgainAcrossTheCutIsDropped) {
    // Same text ignoring case and punctuation, starting 0.4 s after the committed one: dropped.
    EXPECT_EQ(second_window("Cut,", 3.0), (std::vector<std::string>{"next"}));
    // Exactly 0.5 s after: still the same word.
    EXPECT_EQ(second_window("CUT", 3.1), (std::vector<std::string>{"next"}));
    // Another word, or the same text 0.6 s later: kept.
    EXPECT_EQ(second_window("cat", 3.0), (std::vector<std::string>{"cat", "next"}));
    EXPECT_EQ(second_window("cut", 3.2), (std::vector<std::string>{"cut", "next"}));
}

TEST(SasCommitter, TheLastFeedCommitsEverything) {
    Heard h{{word("a", 0.5, 1.0), word("b", 1.5, 1.9)}};
    pk::SasCommitter c(kRate, h.fn());
    append(c, 0, 200);
    EXPECT_TRUE(c.commit(2.0, false).empty());
    EXPECT_EQ(texts(c.commit(0.0, true)), (std::vector<std::string>{"a", "b"}));
    EXPECT_TRUE(c.commit(0.0, true).empty());
}

TEST(SasCommitter, EveryWordCommitsOnceForAnyFeedSize) {
    Heard h;
    std::vector<std::string> want;
    for (int i = 0; i < 40; ++i) {  // a word of 0.4 s every 0.7 s, over 28 s
        const std::string t = "w" + std::to_string(i);
        h.words.push_back(word(t, 0.2 + i * 0.7, 0.6 + i * 0.7));
        want.push_back(t);
    }
    const int64_t total = 2850;
    for (int64_t feed : {10, 50, 500}) {
        pk::SasCommitter c(kRate, h.fn());
        std::vector<std::string> got;
        for (int64_t at = 0; at < total; at += feed) {
            const int64_t to = std::min(total, at + feed);
            append(c, at, to);
            // The diarizer lags the audio by up to 0.5 s.
            for (const auto& w : c.commit(std::max(0.0, to / static_cast<double>(kRate) - 0.5), false))
                got.push_back(w.text);
        }
        for (const auto& w : c.commit(0.0, true)) got.push_back(w.text);
        EXPECT_EQ(got, want) << "feed " << feed;
    }
}

TEST(SasCommitter, AWindowOfThirtySecondsCommitsAllItsWords) {
    Heard h{{word("endless", 0.5, 30.5)}};
    pk::SasCommitter c(kRate, h.fn());
    append(c, 0, 3100);
    EXPECT_EQ(texts(c.commit(31.0, false)), (std::vector<std::string>{"endless"}));
}

}  // namespace
