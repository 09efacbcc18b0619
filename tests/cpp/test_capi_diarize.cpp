// Diarization through the C ABI (parakeet_capi_diarize_*): the model kind, the JSON document
// and its segments (the same as the model's post-processing of its probabilities), the wrong
// kinds both ways with parakeet.cpp's messages, bad input (buffer, audio, options; all-silence
// audio, a 1-sample clip, no samples), and results bitwise equal at any pool size and thread
// count with requests running concurrently.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "audio/wav_reader.h"
#include "capi_handles.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

std::string data(const std::string& rel) { return nemo_fixtures::data_dir() + "/" + rel; }
const std::string kDiarModel = "nemo/sortformer_offline/model.gguf";
const std::string kAsrModel = "nemo/hybrid_tdt_ctc/model.gguf";

using capi_handles::Ctx;
using capi_handles::take;

std::vector<float> conversation() {
    return pk::read_wav_file(data("audio/conversation_16k.wav"), 0).samples;
}

void expect_failure(char* result, int code, const std::string& message_part) {
    EXPECT_EQ(result, nullptr);
    parakeet_capi_free_string(result);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), code) << parakeet_capi_thread_last_error();
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find(message_part), std::string::npos)
        << parakeet_capi_thread_last_error();
}

TEST(CapiDiarize, ADiarizationFileLoadsAsThatKindAndGivesSegments) {
    Ctx ctx(data(kDiarModel));
    ASSERT_NE(ctx.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_model_kind(ctx.p), PARAKEET_MODEL_KIND_DIARIZATION);
    const std::vector<float> s = conversation();
    const std::string doc = take(parakeet_capi_diarize_pcm(ctx.p, s.data(), static_cast<int>(s.size()), 16000));
    ASSERT_NE(doc, "") << parakeet_capi_thread_last_error();
    EXPECT_EQ(doc.rfind("{\"speakers\":4,\"segments\":[{\"speaker\":", 0), 0u) << doc.substr(0, 80);
    // The WAV path gives the same document.
    const std::string from_file = take(parakeet_capi_diarize_path(ctx.p, data("audio/conversation_16k.wav").c_str()));
    EXPECT_EQ(from_file, doc);
    // With probabilities: frame_sec and 4 rows; the same segments first.
    const std::string with = take(parakeet_capi_diarize_pcm_with(ctx.p, s.data(), static_cast<int>(s.size()), 16000,
                                                                 "{\"probabilities\": true}"));
    EXPECT_EQ(with.substr(0, doc.size() - 1), doc.substr(0, doc.size() - 1));
    EXPECT_NE(with.find(",\"frame_sec\":0.080,\"probabilities\":[["), std::string::npos) << with.substr(doc.size() - 1, 80);
    // Tuned post-processing changes the segments.
    const std::string tuned = take(parakeet_capi_diarize_pcm_with(
        ctx.p, s.data(), static_cast<int>(s.size()), 16000, "{\"min_duration_on\": 0.25, \"min_duration_off\": 0.3}"));
    EXPECT_NE(tuned, "");
    EXPECT_LT(tuned.size(), doc.size());
}

TEST(CapiDiarize, WrongKindsAreRefusedBothWaysWithParakeetCppsMessages) {
    Ctx diar(data(kDiarModel));
    Ctx asr(data(kAsrModel));
    ASSERT_NE(diar.p, nullptr);
    ASSERT_NE(asr.p, nullptr);
    const std::vector<float> s(16000, 0.01f);
    expect_failure(parakeet_capi_transcribe_pcm_json(diar.p, s.data(), 16000, 16000, 0), PARAKEET_ERROR_UNSUPPORTED,
                   "context holds a diarization model; use parakeet_capi_diarize_*");
    expect_failure(parakeet_capi_transcribe_path(diar.p, data("audio/speech_16k.wav").c_str(), 0),
                   PARAKEET_ERROR_UNSUPPORTED, "context holds a diarization model");
    expect_failure(parakeet_capi_diarize_pcm(asr.p, s.data(), 16000, 16000), PARAKEET_ERROR_UNSUPPORTED,
                   "context holds an ASR model; diarize_* needs a diarization model");
    expect_failure(parakeet_capi_diarize_path(asr.p, data("audio/speech_16k.wav").c_str()), PARAKEET_ERROR_UNSUPPORTED,
                   "context holds an ASR model");
    expect_failure(parakeet_capi_diarize_pcm_with(nullptr, s.data(), 16000, 16000, nullptr),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "context is NULL");
}

TEST(CapiDiarize, BadInputGetsClearErrorsOrDocumentedEmptyResults) {
    Ctx ctx(data(kDiarModel));
    ASSERT_NE(ctx.p, nullptr);
    // No samples: the empty document.
    EXPECT_EQ(take(parakeet_capi_diarize_pcm(ctx.p, nullptr, 0, 16000)), "{\"speakers\":4,\"segments\":[]}");
    expect_failure(parakeet_capi_diarize_pcm(ctx.p, nullptr, 10, 16000), PARAKEET_ERROR_INVALID_ARGUMENT,
                   "invalid samples buffer");
    std::vector<float> s(16000, 0.01f);
    expect_failure(parakeet_capi_diarize_pcm(ctx.p, s.data(), -1, 16000), PARAKEET_ERROR_INVALID_ARGUMENT,
                   "invalid samples buffer");
    expect_failure(parakeet_capi_diarize_pcm(ctx.p, s.data(), 16000, 10), PARAKEET_ERROR_INVALID_AUDIO, "sample rate");
    s[5] = std::nanf("");
    expect_failure(parakeet_capi_diarize_pcm(ctx.p, s.data(), 16000, 16000), PARAKEET_ERROR_INVALID_AUDIO,
                   "not a finite number");
    expect_failure(parakeet_capi_diarize_path(ctx.p, "/nonexistent.wav"), PARAKEET_ERROR_INVALID_AUDIO, "");
    expect_failure(parakeet_capi_diarize_path(ctx.p, nullptr), PARAKEET_ERROR_INVALID_ARGUMENT, "WAV path is NULL");

    // All-silence mono audio and a 1-sample clip: a valid document (the random-weight fixture
    // model's probabilities on silence are whatever its biases make them).
    const std::vector<float> silence = pk::read_wav_file(data("audio/silence_2s_16k.wav"), 0).samples;
    const std::string quiet =
        take(parakeet_capi_diarize_pcm(ctx.p, silence.data(), static_cast<int>(silence.size()), 16000));
    EXPECT_EQ(quiet.rfind("{\"speakers\":4,\"segments\":[", 0), 0u) << parakeet_capi_thread_last_error();
    const float one = 0.25f;
    const std::string tiny = take(parakeet_capi_diarize_pcm_with(ctx.p, &one, 1, 16000, "{\"probabilities\":true}"));
    EXPECT_EQ(tiny.rfind("{\"speakers\":4,\"segments\":[", 0), 0u) << parakeet_capi_thread_last_error();
    EXPECT_EQ(tiny.find("nan"), std::string::npos) << tiny;

    // Options: unknown keys, wrong types, out of range.
    const float* p = silence.data();
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"onsett\": 0.5}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "unknown key \"onsett\"");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"onset\": 1.5}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "out of range");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"pad_onset\": -1}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "out of range");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"probabilities\": 1}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "[1]"), PARAKEET_ERROR_INVALID_ARGUMENT, "");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"streaming\": {\"chunk_size\": 6}}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "unknown streaming key \"chunk_size\"");
    expect_failure(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "{\"streaming\": 6}"),
                   PARAKEET_ERROR_INVALID_ARGUMENT, "");
    EXPECT_NE(take(parakeet_capi_diarize_pcm_with(ctx.p, p, 1600, 16000, "")), "");  // "" means {}
}

// The per-speaker probability rows of a document made with "probabilities": true, frame-major.
std::vector<float> probability_rows(const std::string& doc, int n_speakers) {
    const size_t at = doc.find("\"probabilities\":[[");
    EXPECT_NE(at, std::string::npos);
    std::vector<std::vector<float>> rows(1);
    for (const char* c = doc.c_str() + at + 18; *c && !(c[0] == ']' && c[1] == ']');) {
        if (*c == ']') {
            rows.emplace_back();
            c += 3;  // "],["
            continue;
        }
        char* end = nullptr;
        rows.back().push_back(std::strtof(c, &end));
        c = (*end == ',') ? end + 1 : end;
    }
    EXPECT_EQ(static_cast<int>(rows.size()), n_speakers);
    std::vector<float> out;
    for (size_t f = 0; f < rows[0].size(); ++f)
        for (const auto& r : rows) out.push_back(r.at(f));
    return out;
}

// "streaming" runs NeMo's forward_streaming with the given settings: the C ABI's probabilities
// are NeMo's for each of the streaming fixture's settings (one compresses the cache in the clip).
TEST(CapiDiarize, TheStreamingOptionGivesNemosForwardStreaming) {
    const std::string dir = data("nemo/sortformer_stream");
    Ctx ctx(dir + "/model.gguf");
    ASSERT_NE(ctx.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> s = conversation();
    for (const char* setting : {"tiny", "ultra", "wide"}) {
        SCOPED_TRACE(setting);
        const pk::GgufReader ref =
            pk::GgufReader::open(dir + "/streamref_conversation_" + std::string(setting) + ".gguf");
        std::string opts = "{\"probabilities\": true, \"streaming\": {";
        const char* keys[] = {"chunk_len", "chunk_left_context", "chunk_right_context", "fifo_len", "spkcache_len",
                              "spkcache_update_period"};
        for (const char* k : keys)
            opts += std::string(k == keys[0] ? "" : ", ") + "\"" + k + "\": " +
                    std::to_string(ref.get_i32(std::string("stream.") + k));
        opts += "}}";
        const std::string doc =
            take(parakeet_capi_diarize_pcm_with(ctx.p, s.data(), static_cast<int>(s.size()), 16000, opts.c_str()));
        ASSERT_NE(doc, "") << parakeet_capi_thread_last_error();
        const std::vector<float> want = nemo_fixtures::tensor(ref, "probs");
        const std::vector<float> got = probability_rows(doc, 4);
        ASSERT_EQ(got.size(), want.size());
        float worst = 0.0f;
        for (size_t i = 0; i < want.size(); ++i) worst = std::max(worst, std::fabs(got[i] - want[i]));
        EXPECT_LE(worst, 1e-4f);
    }
}

TEST(CapiDiarize, ResultsAreBitwiseEqualAtAnyPoolSizeAndThreadCount) {
    Ctx ctx(data(kDiarModel));
    ASSERT_NE(ctx.p, nullptr);
    const std::vector<float> s = conversation();
    const int n = static_cast<int>(s.size());
    const char* opts = "{\"probabilities\": true}";
    const std::string want = take(parakeet_capi_diarize_pcm_with(ctx.p, s.data(), n, 16000, opts));
    ASSERT_NE(want, "");
    for (const auto& [backends, threads] : std::vector<std::pair<int, int>>{{1, 1}, {2, 1}, {3, 2}, {2, 3}}) {
        ASSERT_EQ(parakeet_capi_set_concurrency(ctx.p, backends, threads), backends);
        std::vector<std::string> got(4);
        std::vector<std::thread> pool;
        for (size_t i = 0; i < got.size(); ++i)
            pool.emplace_back([&, i] { got[i] = take(parakeet_capi_diarize_pcm_with(ctx.p, s.data(), n, 16000, opts)); });
        for (std::thread& t : pool) t.join();
        for (const std::string& g : got) EXPECT_EQ(g, want) << backends << " backends, " << threads << " threads";
        if (backends > 1) EXPECT_GT(parakeet_capi_pool_working_set_bytes(ctx.p), 0);  // the pool served them
    }
}

}  // namespace
