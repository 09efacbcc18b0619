// Every PARAKEET_ERROR_* code, each produced by a real failing call through the C ABI, read
// back from both parakeet_capi_thread_last_error_code() and parakeet_capi_last_error_code(ctx);
// a success clears both. Also the model kinds: a file of another kind is refused with
// UNSUPPORTED, and parakeet_capi_model_kind reports what a context holds.
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "capi/context.h"
#include "gguf_test_builder.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

std::string fixture(const std::string& family) { return nemo_fixtures::data_dir() + "/nemo/" + family + "/model.gguf"; }

struct Ctx {
    parakeet_ctx* p;
    explicit Ctx(const std::string& path) : p(parakeet_capi_load(path.c_str())) {}
    ~Ctx() { parakeet_capi_free(p); }
};

// A second of a 440 Hz tone at 16 kHz.
std::vector<float> tone() {
    std::vector<float> s(16000);
    for (size_t i = 0; i < s.size(); ++i) s[i] = 0.1f * std::sin(0.1727f * static_cast<float>(i));
    return s;
}

// Checks that the last call failed with `code` on this thread and on ctx (when given), and
// that its message is not empty.
void expect_code(int code, parakeet_ctx* ctx = nullptr) {
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), code) << parakeet_capi_thread_last_error();
    EXPECT_STRNE(parakeet_capi_thread_last_error(), "");
    if (ctx != nullptr) EXPECT_EQ(parakeet_capi_last_error_code(ctx), code);
}

std::string write_temp(const std::string& name, const std::vector<uint8_t>& bytes) {
    const std::string path = testing::TempDir() + name;
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
}

TEST(CapiErrorCodes, ValuesAreTheHeaders) {
    // The C ABI's numbers are the library's ErrorCode values (common/errors.h).
    EXPECT_EQ(PARAKEET_ERROR_NONE, static_cast<int>(pk::ErrorCode::None));
    EXPECT_EQ(PARAKEET_ERROR_INVALID_ARGUMENT, static_cast<int>(pk::ErrorCode::InvalidArgument));
    EXPECT_EQ(PARAKEET_ERROR_INVALID_AUDIO, static_cast<int>(pk::ErrorCode::InvalidAudio));
    EXPECT_EQ(PARAKEET_ERROR_BAD_MODEL, static_cast<int>(pk::ErrorCode::BadModel));
    EXPECT_EQ(PARAKEET_ERROR_UNSUPPORTED, static_cast<int>(pk::ErrorCode::Unsupported));
    EXPECT_EQ(PARAKEET_ERROR_CANCELLED, static_cast<int>(pk::ErrorCode::Cancelled));
    EXPECT_EQ(PARAKEET_ERROR_OUT_OF_MEMORY, static_cast<int>(pk::ErrorCode::OutOfMemory));
    EXPECT_EQ(PARAKEET_ERROR_INTERNAL, static_cast<int>(pk::ErrorCode::Internal));
}

TEST(CapiErrorCodes, InvalidArgument) {
    EXPECT_EQ(parakeet_capi_load(nullptr), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(nullptr, nullptr, 0, 16000, 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_ARGUMENT);
    EXPECT_EQ(parakeet_capi_last_error_code(nullptr), PARAKEET_ERROR_INVALID_ARGUMENT);
    Ctx c(fixture("hybrid_tdt_ctc"));
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(c.p, nullptr, -1, 16000, 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_ARGUMENT, c.p);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(c.p, nullptr, 0, 16000, 7), nullptr);  // no such decoder
    expect_code(PARAKEET_ERROR_INVALID_ARGUMENT, c.p);
    EXPECT_EQ(parakeet_capi_load_with(fixture("hybrid_tdt_ctc").c_str(), "{\"bf17\": true}"), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_ARGUMENT);
}

TEST(CapiErrorCodes, InvalidAudio) {
    Ctx c(fixture("hybrid_tdt_ctc"));
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    std::vector<float> s = tone();
    s[5] = std::numeric_limits<float>::quiet_NaN();
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(c.p, s.data(), static_cast<int>(s.size()), 16000, 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_AUDIO, c.p);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(c.p, s.data(), 10, 20, 0), nullptr);  // 20 Hz
    expect_code(PARAKEET_ERROR_INVALID_AUDIO, c.p);
    EXPECT_EQ(parakeet_capi_transcribe_path_json(c.p, "/nonexistent/clip.wav", 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_AUDIO, c.p);
    const std::string not_wav = write_temp("not_a.wav", {'R', 'I', 'F', 'X', 0, 0, 0, 0});
    EXPECT_EQ(parakeet_capi_transcribe_path_json(c.p, not_wav.c_str(), 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_AUDIO, c.p);
}

TEST(CapiErrorCodes, BadModel) {
    EXPECT_EQ(parakeet_capi_load("/nonexistent/model.gguf"), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
    const std::string junk = write_temp("junk.gguf", {'G', 'G', 'U', 'F', 3, 0, 0});
    EXPECT_EQ(parakeet_capi_load(junk.c_str()), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
    // A readable GGUF of an architecture no loader knows.
    const std::string other = write_temp("other.gguf", gguf_test::GgufBuilder().kv_string("general.architecture", "llama").build());
    EXPECT_EQ(parakeet_capi_load(other.c_str()), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
}

TEST(CapiErrorCodes, UnsupportedFeatureOfTheModel) {
    Ctx ctc(fixture("ctc"));
    ASSERT_NE(ctc.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> s = tone();
    // The transducer head of a CTC-only model, and beam search, which needs it.
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(ctc.p, s.data(), static_cast<int>(s.size()), 16000,
                                                PARAKEET_DECODER_TRANSDUCER),
              nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, ctc.p);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_nbest_json(ctc.p, s.data(), static_cast<int>(s.size()), 16000, 4, 2, 1,
                                                      nullptr),
              nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, ctc.p);
    Ctx tdt(fixture("tdt"));
    ASSERT_NE(tdt.p, nullptr) << parakeet_capi_load_error();
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(tdt.p, s.data(), static_cast<int>(s.size()), 16000, PARAKEET_DECODER_CTC),
              nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, tdt.p);
}

TEST(CapiErrorCodes, UnsupportedModelKindIsRefusedAtLoad) {
    // A CED file loads as a sound tagger; one without the schema's keys is a bad model file.
    const std::string ced = write_temp("ced.gguf", gguf_test::GgufBuilder().kv_string("general.architecture", "ced").build());
    EXPECT_EQ(parakeet_capi_load(ced.c_str()), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
    EXPECT_NE(std::string(parakeet_capi_load_error()).find("ced.embed_dim"), std::string::npos)
        << parakeet_capi_load_error();
    // A Silero VAD file loads as a VAD model; one without the schema's keys is a bad model file.
    const std::string vad = write_temp("vad.gguf", gguf_test::GgufBuilder().kv_string("general.architecture", "silero_vad").build());
    EXPECT_EQ(parakeet_capi_load(vad.c_str()), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
    EXPECT_NE(std::string(parakeet_capi_load_error()).find("silero_vad.encoder.n_layers"), std::string::npos)
        << parakeet_capi_load_error();
    const std::string diar = write_temp("diar.gguf", gguf_test::GgufBuilder()
                                                         .kv_string("general.architecture", "parakeet")
                                                         .kv_string("parakeet.arch", "diarization")
                                                         .build());
    // A diarization file loads as a diarization model; one without the schema's keys is a bad model file.
    EXPECT_EQ(parakeet_capi_load(diar.c_str()), nullptr);
    expect_code(PARAKEET_ERROR_BAD_MODEL);
    EXPECT_NE(std::string(parakeet_capi_load_error()).find("parakeet.encoder.feat_in"), std::string::npos)
        << parakeet_capi_load_error();
}

TEST(CapiErrorCodes, WrongKindContextIsRefusedByEveryEntryPoint) {
    // No loader makes a non-ASR context yet, so one is made here the way a future loader will:
    // the entry points must refuse it by its kind, never touch the (absent) ASR model.
    parakeet_ctx vad;
    vad.kind = pk::ModelKind::Vad;
    EXPECT_EQ(parakeet_capi_model_kind(&vad), PARAKEET_MODEL_KIND_VAD);
    const std::vector<float> s = tone();
    const int n = static_cast<int>(s.size());
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(&vad, s.data(), n, 16000, 0), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_NE(std::string(parakeet_capi_thread_last_error()).find("holds a VAD model"), std::string::npos);
    EXPECT_EQ(parakeet_capi_transcribe_path(&vad, "clip.wav", 0), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_model_info_json(&vad), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_set_concurrency(&vad, 2, 1), -1);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_set_attention_context(&vad, 64, 64), -1);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_stream_begin(&vad), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_transcribe_pcm_nbest_json(&vad, s.data(), n, 16000, 2, 1, 1, nullptr), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    const char* phrases[] = {"hello"};
    EXPECT_EQ(parakeet_capi_context_create_text(&vad, phrases, nullptr, 1, 1.0f), nullptr);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    float* logits = nullptr;
    int frames = 0, classes = 0;
    EXPECT_NE(parakeet_capi_transcribe_pcm_logits(&vad, s.data(), n, 16000, &logits, &frames, &classes), 0);
    expect_code(PARAKEET_ERROR_UNSUPPORTED, &vad);
    EXPECT_EQ(parakeet_capi_model_kind(nullptr), PARAKEET_MODEL_KIND_NONE);
}

TEST(CapiErrorCodes, Cancelled) {
    Ctx c(fixture("hybrid_tdt_ctc"));
    ASSERT_NE(c.p, nullptr) << parakeet_capi_load_error();
    const std::vector<float> s = tone();
    const auto stop = [](float, void*) -> int { return 1; };
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json_progress(c.p, s.data(), static_cast<int>(s.size()), 16000, 0, stop,
                                                         nullptr),
              nullptr);
    expect_code(PARAKEET_ERROR_CANCELLED, c.p);
}

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define PARAKEET_UNDER_SANITIZER 1
#endif

TEST(CapiErrorCodes, OutOfMemory) {
#ifdef PARAKEET_UNDER_SANITIZER
    GTEST_SKIP() << "address-space limits do not work under the sanitizers' shadow memory";
#else
    // In a child process whose address space is capped just above what it uses, a
    // transcription's allocations fail: the call returns NULL with OUT_OF_MEMORY. The child
    // loads its own context on one thread (a forked child has none of the parent's workers).
    const std::string path = fixture("hybrid_tdt_ctc");
    const std::vector<float> s(16000 * 600, 0.0f);  // ten minutes: its mel features alone are 15 MB
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        parakeet_ctx* c = parakeet_capi_load_with(path.c_str(), "{\"threads\": 1}");
        if (c == nullptr) _exit(2);
        std::ifstream statm("/proc/self/statm");
        long pages = 0;
        statm >> pages;
        const rlim_t cap = static_cast<rlim_t>(pages) * static_cast<rlim_t>(sysconf(_SC_PAGESIZE)) + (rlim_t{1} << 20);
        const rlimit lim{cap, cap};
        if (setrlimit(RLIMIT_AS, &lim) != 0) _exit(3);
        char* out = parakeet_capi_transcribe_pcm_json(c, s.data(), static_cast<int>(s.size()), 16000, 0);
        if (out != nullptr) _exit(4);
        _exit(parakeet_capi_thread_last_error_code() == PARAKEET_ERROR_OUT_OF_MEMORY &&
                      parakeet_capi_last_error_code(c) == PARAKEET_ERROR_OUT_OF_MEMORY
                  ? 0
                  : 5);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status)) << "the child died instead of reporting an error";
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: load failed, 3: setrlimit failed, 4: the call succeeded, 5: another code";
#endif
}

TEST(CapiErrorCodes, InternalForAnythingElseAndSuccessClears) {
    // Failures that are nobody's input (a broken invariant: a std::logic_error escaping the
    // library) are INTERNAL. No public call can be made to fail that way on purpose, so the
    // guard every entry point uses is driven directly.
    EXPECT_EQ(pk::capi::guarded<int>(nullptr, -1, []() -> int { throw std::logic_error("invariant"); }), -1);
    expect_code(PARAKEET_ERROR_INTERNAL);
    EXPECT_STREQ(parakeet_capi_thread_last_error(), "invariant");
    Ctx c(fixture("hybrid_tdt_ctc"));
    ASSERT_NE(c.p, nullptr);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_NONE);
    const std::vector<float> s = tone();
    EXPECT_EQ(parakeet_capi_transcribe_pcm_json(c.p, s.data(), 10, 20, 0), nullptr);
    expect_code(PARAKEET_ERROR_INVALID_AUDIO, c.p);
    char* ok = parakeet_capi_transcribe_pcm_json(c.p, s.data(), static_cast<int>(s.size()), 16000, 0);
    ASSERT_NE(ok, nullptr);
    parakeet_capi_free_string(ok);
    EXPECT_EQ(parakeet_capi_thread_last_error_code(), PARAKEET_ERROR_NONE);
    EXPECT_EQ(parakeet_capi_last_error_code(c.p), PARAKEET_ERROR_NONE);
}

}  // namespace
