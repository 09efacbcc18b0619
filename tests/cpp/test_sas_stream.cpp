// Live speaker-attributed ASR (model/sas/sas_stream.h and the C ABI's sas_stream_*) on the
// conversation fixture with the streaming Sortformer fixture and an ASR fixture model: words
// commit while the audio is still arriving; each committed word's speaker is the one the rule
// gives with the whole stream's final segments (what the diarization stream gives for the whole
// clip), for feeds of 0.1 s, 0.5 s and 5 s; the C ABI hands out the utterances of those words,
// the same ones however the audio is cut into feeds, and routes errors as parakeet.cpp does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_handles.h"
#include "model/diar/latency_presets.h"
#include "model/sas/sas_stream.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

std::string data(const std::string& rel) { return nemo_fixtures::data_dir() + "/" + rel; }
const char* kAsr = "nemo/hybrid_tdt_ctc/model.gguf";
const char* kDiar = "nemo/sortformer_stream/model.gguf";

std::vector<float> conversation() { return pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples; }

pk::DiarStreamingParams low(const pk::DiarModel& m) {
    return pk::diar_latency_preset(static_cast<int>(pk::DiarLatency::Low), m.config().streaming);
}

TEST(SasStream, EachCommittedWordHasTheSpeakerTheFinalSegmentsGive) {
    const auto asr = pk::Model::load(data(kAsr));
    const auto diar = pk::DiarModel::load(data(kDiar));
    const std::vector<float> pcm = conversation();
    const int64_t n = static_cast<int64_t>(pcm.size());
    // The whole stream's segments.
    pk::DiarStream whole(*diar, low(*diar));
    const std::vector<pk::DiarSegment> final_segments = whole.feed(pcm.data(), n, true);
    ASSERT_GT(final_segments.size(), 2u);
    for (int64_t feed : {1600, 8000, 80000}) {
        pk::SasStream s(*asr, *diar, low(*diar));
        std::vector<pk::TranscriptWord> words;
        std::vector<int> speakers;
        size_t before_last = 0;
        for (int64_t at = 0; at < n; at += feed) {
            const int64_t len = std::min(feed, n - at);
            const bool last = at + len == n;
            s.diarize(pcm.data() + at, len, last);
            const pk::SasWords w = s.commit(pcm.data() + at, len, last);
            ASSERT_EQ(w.words.size(), w.speakers.size());
            if (!last) before_last += w.words.size();
            words.insert(words.end(), w.words.begin(), w.words.end());
            speakers.insert(speakers.end(), w.speakers.begin(), w.speakers.end());
        }
        ASSERT_GT(words.size(), 5u) << feed;
        if (feed < 80000) EXPECT_GT(before_last, 0u) << "nothing committed before the end, feed " << feed;
        EXPECT_EQ(speakers, pk::word_speakers(words, final_segments)) << "feed " << feed;
        for (size_t i = 1; i < words.size(); ++i) EXPECT_GE(words[i].start_sec, words[i - 1].start_sec - 1e-9);
        int heard = 0;
        for (int k = 0; k < 4; ++k) heard += std::count(speakers.begin(), speakers.end(), k) > 0;
        EXPECT_GE(heard, 2) << feed;
    }
}

using capi_handles::Ctx;

TEST(CapiSasStream, FeedsHandOutUtterancesAndErrorsGoWhereParakeetCppSendsThem) {
    Ctx asr(data(kAsr)), diar(data(kDiar)), offline(data("nemo/sortformer_offline/model.gguf"));
    ASSERT_NE(asr.p, nullptr);
    ASSERT_NE(diar.p, nullptr);
    const std::vector<float> pcm = conversation();
    parakeet_sas_stream* s = parakeet_capi_sas_stream_begin_latency(asr.p, diar.p, PARAKEET_DIAR_LATENCY_LOW);
    ASSERT_NE(s, nullptr) << parakeet_capi_thread_last_error();
    int utterances = 0;
    std::string text;
    const int n = static_cast<int>(pcm.size());
    for (int at = 0; at < n; at += 8000) {
        parakeet_sas_result* out = nullptr;
        int n_out = -1;
        const int len = std::min(8000, n - at);
        ASSERT_EQ(parakeet_capi_sas_stream_feed(s, pcm.data() + at, len, at + len == n, &out, &n_out), 0)
            << parakeet_capi_thread_last_error();
        for (int i = 0; i < n_out; ++i) {
            EXPECT_GE(out[i].speaker, -1);
            EXPECT_LE(out[i].start, out[i].end);
            text += std::string(text.empty() ? "" : " ") + out[i].text;
        }
        utterances += n_out;
        parakeet_capi_free_sas_results(out, n_out);
    }
    EXPECT_GT(utterances, 1);
    EXPECT_FALSE(text.empty());
    // After is_last: an input error, on asr.
    EXPECT_EQ(parakeet_capi_sas_stream_feed(s, pcm.data(), 10, 0, nullptr, nullptr), 1);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "stream already finished");
    EXPECT_STREQ(parakeet_capi_last_error(diar.p), "");
    parakeet_capi_sas_stream_free(s);

    s = parakeet_capi_sas_stream_begin(asr.p, diar.p);
    ASSERT_NE(s, nullptr);
    std::vector<float> bad(100, 0.f);
    bad[7] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(parakeet_capi_sas_stream_feed(s, bad.data(), 100, 0, nullptr, nullptr), 1);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_AUDIO);
    EXPECT_EQ(parakeet_capi_sas_stream_feed(s, nullptr, 100, 0, nullptr, nullptr), 1);
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "invalid samples buffer");
    EXPECT_EQ(parakeet_capi_sas_stream_feed(s, pcm.data(), 1600, 0, nullptr, nullptr), 0);  // a success clears it
    EXPECT_STREQ(parakeet_capi_last_error(asr.p), "");
    parakeet_capi_sas_stream_free(s);

    // Bad latency and a wrong context: asr's; a diarization model that cannot stream: diar's.
    EXPECT_EQ(parakeet_capi_sas_stream_begin_latency(asr.p, diar.p, 4), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(asr.p), PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_sas_stream_begin(diar.p, asr.p), nullptr);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_EQ(parakeet_capi_sas_stream_begin(asr.p, offline.p), nullptr);
    EXPECT_EQ(parakeet_capi_last_error_code(offline.p), PARAKEET_ERROR_UNSUPPORTED);
    EXPECT_NE(std::string(parakeet_capi_last_error(offline.p)).find("per_feature"), std::string::npos);
    EXPECT_EQ(parakeet_capi_sas_stream_feed(nullptr, pcm.data(), 10, 0, nullptr, nullptr), 1);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_INVALID_ARGUMENT);
    parakeet_capi_sas_stream_free(nullptr);
}


// The words a stream hands out with their speakers ("speaker word" lines), fed `feed` samples
// per call. (An utterance is a run within one call's words, so a run can come out split in two
// by a call boundary: the words are what must not depend on the feeds.)
std::string streamed(parakeet_ctx* asr, parakeet_ctx* diar, int latency, const std::vector<float>& pcm, int feed) {
    parakeet_sas_stream* s = parakeet_capi_sas_stream_begin_latency(asr, diar, latency);
    EXPECT_NE(s, nullptr) << parakeet_capi_thread_last_error();
    std::string all;
    const int n = static_cast<int>(pcm.size());
    for (int at = 0; at < n; at += feed) {
        parakeet_sas_result* out = nullptr;
        int n_out = 0;
        const int len = std::min(feed, n - at);
        EXPECT_EQ(parakeet_capi_sas_stream_feed(s, pcm.data() + at, len, at + len == n, &out, &n_out), 0);
        for (int i = 0; i < n_out; ++i) {
            std::istringstream words(out[i].text);
            for (std::string w; words >> w;) all += std::to_string(out[i].speaker) + " " + w + "\n";
        }
        parakeet_capi_free_sas_results(out, n_out);
    }
    parakeet_capi_sas_stream_free(s);
    return all;
}

TEST(CapiSasStream, TheUtterancesDoNotDependOnHowTheAudioIsCutIntoFeeds) {
    Ctx asr(data(kAsr)), diar(data(kDiar));
    ASSERT_NE(asr.p, nullptr);
    ASSERT_NE(diar.p, nullptr);
    const std::vector<float> pcm = conversation();
    for (int latency : {PARAKEET_DIAR_LATENCY_MODEL, PARAKEET_DIAR_LATENCY_LOW, PARAKEET_DIAR_LATENCY_VERY_LOW,
                        PARAKEET_DIAR_LATENCY_ULTRA_LOW}) {
        const std::string fine = streamed(asr.p, diar.p, latency, pcm, 1600);
        EXPECT_GT(std::count(fine.begin(), fine.end(), '\n'), 10) << "few words at latency " << latency;
        for (int feed : {8000, 80000}) EXPECT_EQ(streamed(asr.p, diar.p, latency, pcm, feed), fine) << latency << " " << feed;
    }
}

}  // namespace
