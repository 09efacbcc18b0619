// Progress and cancellation of diarization through the C ABI
// (parakeet_capi_transcribe_and_diarize_json_with_progress, parakeet_capi_diarize_pcm_with_progress)
// on the committed fixtures: the three-voice conversation, an ASR fixture model, and the offline
// and the streaming Sortformer fixtures (the streaming checkpoint diarizes chunk by chunk). The
// documents equal the calls' without a callback; the fractions are monotone, from 0 to exactly 1,
// with the transcription below one half and the diarization above it; a callback that says stop
// in either stage ends the call with PARAKEET_ERROR_CANCELLED on that stage's context, is not
// called again, and leaves both contexts serving the next request.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_handles.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

std::string data(const std::string& rel) { return nemo_fixtures::data_dir() + "/" + rel; }

using capi_handles::Ctx;
using capi_handles::take;

// Every fraction a callback heard; it says stop (returns 1) at the first fraction above
// stop_above (a value above 1 never stops) or at report number stop_at (0-based).
struct Log {
    std::vector<float> seen;
    float stop_above = 2.0f;
    size_t stop_at = static_cast<size_t>(-1);
    int calls_after_stop = 0;
    bool stopped = false;

    static int record(float fraction, void* user_data) {
        Log& log = *static_cast<Log*>(user_data);
        if (log.stopped) ++log.calls_after_stop;
        log.stopped = log.stopped || fraction > log.stop_above || log.seen.size() == log.stop_at;
        log.seen.push_back(fraction);
        return log.stopped ? 1 : 0;
    }
};

void expect_monotone_from_0_to_1(const std::vector<float>& seen) {
    ASSERT_FALSE(seen.empty());
    EXPECT_EQ(seen.front(), 0.0f);
    EXPECT_EQ(seen.back(), 1.0f);
    for (size_t i = 1; i < seen.size(); ++i) EXPECT_LE(seen[i - 1], seen[i]) << i;
}

size_t count_between(const std::vector<float>& seen, float lo, float hi) {
    size_t n = 0;
    for (float f : seen) n += f > lo && f < hi;
    return n;
}

// One diarization checkpoint: the offline one, or the streaming one (streaming_mode on).
class CapiSasProgress : public ::testing::TestWithParam<const char*> {
protected:
    Ctx asr{data("nemo/hybrid_tdt_ctc/model.gguf")};
    Ctx diar{data(std::string("nemo/") + GetParam() + "/model.gguf")};
    std::vector<float> pcm = pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples;
    int n() const { return static_cast<int>(pcm.size()); }
    void SetUp() override {
        ASSERT_NE(asr.p, nullptr) << parakeet_capi_load_error();
        ASSERT_NE(diar.p, nullptr) << parakeet_capi_load_error();
    }
    std::string plain() const {
        return take(parakeet_capi_transcribe_and_diarize_json(asr.p, diar.p, pcm.data(), n(), 16000));
    }
    char* with(Log& log) const {
        return parakeet_capi_transcribe_and_diarize_json_with_progress(asr.p, diar.p, pcm.data(), n(), 16000,
                                                                       &Log::record, &log);
    }
};

TEST_P(CapiSasProgress, TheDocumentIsTheOneWithoutProgressAndTheFractionsCoverBothStages) {
    const std::string want = plain();
    ASSERT_NE(want, "") << parakeet_capi_thread_last_error();
    Log log;
    EXPECT_EQ(take(with(log)), want);
    expect_monotone_from_0_to_1(log.seen);
    // Both stages report within their halves, not only at their ends.
    EXPECT_GE(count_between(log.seen, 0.0f, 0.5f), 3u);
    EXPECT_GE(count_between(log.seen, 0.5f, 1.0f), 3u);
    // No callback: the same document.
    EXPECT_EQ(take(parakeet_capi_transcribe_and_diarize_json_with_progress(asr.p, diar.p, pcm.data(), n(), 16000,
                                                                           nullptr, nullptr)),
              want);
}

TEST_P(CapiSasProgress, StopAtTheFirstReportCancelsTheTranscriptionOnTheAsrContext) {
    const std::string want = plain();
    Log log;
    log.stop_above = -1.0f;
    EXPECT_EQ(with(log), nullptr);
    EXPECT_EQ(log.seen.size(), 1u);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_CANCELLED);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "cancelled by the progress callback");
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_CANCELLED);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "");
    // Both backends were given back: the next requests run (a leaked lease would hang here).
    EXPECT_EQ(plain(), want);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "");
}

TEST_P(CapiSasProgress, StopAtTheDiarizationsFirstReportCancelsItOnTheDiarizationContext) {
    const std::string want = plain();
    // The diarization's first report (its 0, so 0.5) is the one just before the first above
    // 0.5; the transcription's last (its 1) is 0.5 too, and a stop there cancels the
    // transcription.
    Log full;
    take(with(full));
    size_t first_above = 0;
    while (first_above < full.seen.size() && full.seen[first_above] <= 0.5f) ++first_above;
    ASSERT_GT(first_above, 1u);
    ASSERT_LT(first_above, full.seen.size());
    Log log;
    log.stop_at = first_above - 1;
    EXPECT_EQ(with(log), nullptr);
    EXPECT_EQ(log.calls_after_stop, 0);
    ASSERT_EQ(log.seen.size(), first_above);
    EXPECT_EQ(log.seen.back(), 0.5f);
    EXPECT_EQ(parakeet_capi_last_error_code(diar.p), PARAKEET_ERROR_CANCELLED);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "cancelled by the progress callback");
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_CANCELLED);
    EXPECT_EQ(plain(), want);
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "");
    // Half-way through the diarization: stopped there, not called again.
    Log mid;
    mid.stop_above = 0.75f;
    EXPECT_EQ(with(mid), nullptr);
    EXPECT_EQ(mid.calls_after_stop, 0);
    EXPECT_GT(mid.seen.back(), 0.75f);
    EXPECT_LT(mid.seen.back(), 1.0f);
    EXPECT_EQ(parakeet_capi_last_error_code(diar.p), PARAKEET_ERROR_CANCELLED);
    EXPECT_EQ(plain(), want);
}

TEST_P(CapiSasProgress, DiarizePcmWithProgressGivesTheSameDocumentAndCancels) {
    const std::string want = take(parakeet_capi_diarize_pcm_with(diar.p, pcm.data(), n(), 16000, nullptr));
    ASSERT_NE(want, "") << parakeet_capi_thread_last_error();
    Log log;
    EXPECT_EQ(take(parakeet_capi_diarize_pcm_with_progress(diar.p, pcm.data(), n(), 16000, nullptr, &Log::record,
                                                           &log)),
              want);
    expect_monotone_from_0_to_1(log.seen);
    EXPECT_GE(count_between(log.seen, 0.0f, 1.0f), 3u);
    Log stop;
    stop.stop_above = -1.0f;
    EXPECT_EQ(parakeet_capi_diarize_pcm_with_progress(diar.p, pcm.data(), n(), 16000, nullptr, &Log::record, &stop),
              nullptr);
    EXPECT_EQ(stop.seen.size(), 1u);
    EXPECT_EQ(parakeet_capi_last_error_code(diar.p), PARAKEET_ERROR_CANCELLED);
    EXPECT_EQ(take(parakeet_capi_diarize_pcm_with(diar.p, pcm.data(), n(), 16000, nullptr)), want);
    // Bad options are an error before any report.
    Log none;
    EXPECT_EQ(parakeet_capi_diarize_pcm_with_progress(diar.p, pcm.data(), n(), 16000, "{\"nope\": 1}", &Log::record,
                                                      &none),
              nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(diar.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_TRUE(none.seen.empty());
}

// The "streaming" option on the offline checkpoint: forward_streaming chunk by chunk, one
// report per chunk.
TEST(CapiDiarizeProgress, TheStreamingOptionReportsChunkByChunk) {
    Ctx diar(data("nemo/sortformer_offline/model.gguf"));
    ASSERT_NE(diar.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> pcm = pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples;
    const int n = static_cast<int>(pcm.size());
    // 0.32 s chunks (4 frames) over the conversation: many chunks.
    const char* opts = "{\"streaming\": {\"chunk_len\": 4, \"chunk_right_context\": 1, \"chunk_left_context\": 1, "
                       "\"fifo_len\": 8, \"spkcache_len\": 16, \"spkcache_update_period\": 4}}";
    const std::string want = take(parakeet_capi_diarize_pcm_with(diar.p, pcm.data(), n, 16000, opts));
    ASSERT_NE(want, "") << parakeet_capi_thread_last_error();
    Log log;
    EXPECT_EQ(take(parakeet_capi_diarize_pcm_with_progress(diar.p, pcm.data(), n, 16000, opts, &Log::record, &log)),
              want);
    expect_monotone_from_0_to_1(log.seen);
    const double seconds = n / 16000.0;
    EXPECT_GE(count_between(log.seen, 0.0f, 1.0f) + 1, static_cast<size_t>(seconds / 0.32));
}

INSTANTIATE_TEST_SUITE_P(Checkpoints, CapiSasProgress, ::testing::Values("sortformer_offline", "sortformer_stream"));

}  // namespace
