// The window arithmetic of chunked streaming (model/stream/chunk_schedule.h), on its own:
// NeMo's context sizes (speech_to_text_streaming_infer_rnnt.py truncates seconds to whole
// 1280-sample encoder frames), the windows' bounds, that the decoded frames add up to the
// offline encoder length (to within the off-grid last window), and that the windows do not depend on how the audio arrives.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "common/errors.h"
#include "model/encoder/encoder.h"
#include "model/stream/chunk_schedule.h"

namespace {

pk::StreamContext context(double left, double chunk, double right) {
    pk::StreamSettings s;
    s.left_sec = left;
    s.chunk_sec = chunk;
    s.right_sec = right;
    return pk::stream_context(s, pk::PreprocessorConfig{}, 8);
}

// Runs a schedule to its end on `n` samples that arrive `step` at a time.
std::vector<pk::ChunkWindow> windows(const pk::StreamContext& c, int64_t n, int64_t step) {
    pk::ChunkSchedule s(c);
    std::vector<pk::ChunkWindow> out;
    for (int64_t received = 0;;) {
        received = std::min(n, received + step);
        const bool final = received == n;
        while (const auto w = s.next(received, final)) {
            out.push_back(*w);
            s.advance(*w);
        }
        if (final) break;
    }
    return out;
}

TEST(StreamContext, SecondsTruncateToWholeEncoderFramesAsNeMoDoes) {
    const pk::StreamContext a = context(10, 2, 2);
    EXPECT_EQ(a.frame_samples, 1280);
    EXPECT_EQ(a.left, 160000);
    EXPECT_EQ(a.chunk, 32000);
    EXPECT_EQ(a.right, 32000);
    EXPECT_EQ(a.window(), 224000);
    const pk::StreamContext b = context(10, 10, 5);
    EXPECT_EQ(b.chunk, 160000);
    EXPECT_EQ(b.right, 62 * 1280);  // 5 s is 62 frames (4.96 s)
    const pk::StreamContext c = context(4, 1, 1);
    EXPECT_EQ(c.left, 50 * 1280);
    EXPECT_EQ(c.chunk, 12 * 1280);  // 1 s is 12 frames
    EXPECT_EQ(c.right, 12 * 1280);
}

TEST(StreamContext, RejectsUnusableSettings) {
    EXPECT_THROW(context(10, 0.05, 2), pk::InvalidArgument);  // under one frame
    EXPECT_THROW(context(-1, 2, 2), pk::InvalidArgument);
    EXPECT_THROW(context(10, 2, -0.5), pk::InvalidArgument);
    EXPECT_THROW(context(std::nan(""), 2, 2), pk::InvalidArgument);
    EXPECT_THROW(context(10, std::numeric_limits<double>::infinity(), 2), pk::InvalidArgument);
    EXPECT_THROW(context(601, 2, 2), pk::InvalidArgument);
    EXPECT_NO_THROW(context(0, 0.08, 0));
}

TEST(ChunkSchedule, FirstChunksFollowNeMosBuffer) {
    const pk::StreamContext c = context(10, 2, 2);
    const auto w = windows(c, 20 * 16000, 320000);
    ASSERT_GE(w.size(), 3u);
    // Chunk 0: [0, 2 s) with 2 s of right context and no left context.
    EXPECT_EQ(w[0].window_start, 0);
    EXPECT_EQ(w[0].window_end, 64000);
    EXPECT_EQ(w[0].left_frames, 0);
    EXPECT_EQ(w[0].decode_frames, 25);
    // Chunk 1: the left context grows by one chunk.
    EXPECT_EQ(w[1].window_start, 0);
    EXPECT_EQ(w[1].window_end, 96000);
    EXPECT_EQ(w[1].left_frames, 25);
    // Chunk 6 (end 16 s) is the first with the full 10 s of left context.
    EXPECT_EQ(w[6].window_end, 256000);
    EXPECT_EQ(w[6].window_start, 256000 - 224000);
    EXPECT_EQ(w[6].left_frames, 125);
    EXPECT_TRUE(w.back().last);
}

TEST(ChunkSchedule, DecodedFramesAddUpToTheOfflineEncoderLength) {
    for (const auto& c : {context(10, 2, 2), context(10, 10, 5), context(4, 1, 1), context(2, 1, 0),
                          context(0, 0.08, 0)}) {
        for (int64_t n : {1, 159, 1279, 1280, 12345, 31999, 32000, 64000, 64001, 154201, 224000, 399361, 480000}) {
            const auto w = windows(c, n, n);
            ASSERT_FALSE(w.empty());
            int64_t decoded = 0;
            for (size_t i = 0; i < w.size(); ++i) {
                EXPECT_LE(w[i].window_end - w[i].window_start, c.window());
                EXPECT_EQ(w[i].last, i + 1 == w.size());
                if (w[i].last) {
                    EXPECT_EQ(w[i].window_end, n);
                    const int64_t enc = pk::DwStridingSubsampling::output_frames((w[i].window_end - w[i].window_start) / 160, false);
                    decoded += enc - w[i].left_frames;
                } else {
                    EXPECT_LT(w[i].window_end, n);
                    decoded += w[i].decode_frames;
                }
            }
            // Exact when the last window is on the 1280-sample grid; otherwise its left context
            // rounds down (NeMo's left_samples // 1280), which can decode one frame more.
            const int64_t offline = pk::DwStridingSubsampling::output_frames(n / 160, false);
            if (w.back().window_start % c.frame_samples == 0) {
                EXPECT_EQ(decoded, offline) << "n = " << n;
            } else {
                EXPECT_GE(decoded, offline) << "n = " << n;
                EXPECT_LE(decoded, offline + 1) << "n = " << n;
            }
        }
    }
}

TEST(ChunkSchedule, WindowsDoNotDependOnHowTheAudioArrives) {
    const pk::StreamContext c = context(4, 1, 1);
    const int64_t n = 154201;  // not a multiple of 1280: the last window leaves the frame grid
    const auto whole = windows(c, n, n);
    for (int64_t step : {1, 333, 1280, 4799, 16000}) {
        const auto parts = windows(c, n, step);
        ASSERT_EQ(parts.size(), whole.size()) << "step " << step;
        for (size_t i = 0; i < whole.size(); ++i) {
            EXPECT_EQ(parts[i].window_start, whole[i].window_start);
            EXPECT_EQ(parts[i].window_end, whole[i].window_end);
            EXPECT_EQ(parts[i].left_frames, whole[i].left_frames);
            EXPECT_EQ(parts[i].decode_frames, whole[i].decode_frames);
        }
    }
}

TEST(ChunkSchedule, NothingForAnEmptyStreamAndNothingAfterTheLastChunk) {
    pk::ChunkSchedule s(context(10, 2, 2));
    EXPECT_FALSE(s.next(0, true));
    const auto w = s.next(1000, true);
    ASSERT_TRUE(w);
    EXPECT_TRUE(w->last);
    s.advance(*w);
    EXPECT_TRUE(s.done());
    EXPECT_FALSE(s.next(1000, true));
}

}  // namespace
