// One hour of audio through the C ABI on the tiny fixture model: the request is accepted (no
// length cap), auto attention picks local for it, cancelling works mid-way and frees the
// backend, and the pool's arenas stay within the bound docs/api.md ("Long audio") derives from
// the code — a formula linear in the number of frames:
//
//   floats = T·d                                           encoder output, alive throughout
//          + max( N16 + M·n_mels + F,                      front end: resampled audio, mel
//                 2·T·d + (L+R+1)·d + 3·C·d + F,           local attention: K and V, chunk rows
//                 2·T·d + 3·C·d,                           conv module: GLU and depthwise out
//                 C·(d + ff),                              feed-forward, in row chunks
//                 T·max(joint_hidden, vocab + 1) )         decoders: joint projection, CTC
//          + F
//
// with N16 the samples at 16 kHz when the input is resampled (0 otherwise), M ≤ N16/160 + 1
// mel frames, T ≤ M/8 + 1 encoder frames, C = min(T, 512) rows per chunk and F a fixed
// allowance for the length-independent scratch (subsampling chunk, FFT frames, the
// attention kernel's per-thread blocks, decoder state, alignment).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "nemo_fixtures.h"
#include "parakeet_capi.h"

namespace {

constexpr int kRate = 16000;
constexpr int64_t kHourSamples = int64_t{3600} * kRate;
constexpr int64_t kFixedAllowanceFloats = int64_t{4} << 20;  // F = 16 MiB

std::string model_path() { return nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc/model.gguf"; }

// One hour of deterministic noise with a slow tone (no file committed).
const std::vector<float>& hour_of_audio() {
    static const std::vector<float> audio = [] {
        std::vector<float> a(static_cast<size_t>(kHourSamples));
        uint32_t state = 7u;
        for (size_t i = 0; i < a.size(); ++i) {
            state = state * 1664525u + 1013904223u;
            a[i] = 0.05f * static_cast<float>(std::sin(static_cast<double>(i) * 0.01)) +
                   0.1f * (static_cast<float>(state >> 8) / 16777216.0f - 0.5f);
        }
        return a;
    }();
    return audio;
}

int64_t info_int(const std::string& info, const std::string& key) {
    const size_t at = info.find("\"" + key + "\":");
    EXPECT_NE(at, std::string::npos) << key;
    return at == std::string::npos ? 0 : std::stoll(info.substr(at + key.size() + 3));
}

struct Ctx {
    parakeet_ctx* ctx = parakeet_capi_load(model_path().c_str());
    ~Ctx() { parakeet_capi_free(ctx); }
    std::string info() const {
        char* s = parakeet_capi_model_info_json(ctx);
        std::string out = s ? s : "";
        parakeet_capi_free_string(s);
        return out;
    }
};

// The bound of the header comment, in bytes, for one request of n16 samples at the model rate.
int64_t arena_bound_bytes(const std::string& info, int64_t n16, int left, int right) {
    const int64_t d = info_int(info, "d_model"), ff = info_int(info, "ff_dim"), mels = info_int(info, "n_mels");
    const int64_t joint = info_int(info, "joint_hidden"), vocab = info_int(info, "vocab_size");
    const int64_t M = n16 / 160 + 1, T = M / 8 + 1, C = std::min<int64_t>(T, 512), F = kFixedAllowanceFloats;
    const int64_t front = M * mels + F;  // input at the model's rate: no resampled copy
    const int64_t attention = 2 * T * d + (left + right + 1) * d + 3 * C * d + F;
    const int64_t conv = 2 * T * d + 3 * C * d;
    const int64_t ffn = C * (d + ff);
    const int64_t decoders = T * std::max(joint, vocab + 1);
    const int64_t floats = T * d + std::max({front, attention, conv, ffn, decoders}) + F;
    return floats * static_cast<int64_t>(sizeof(float));
}

struct Progress {
    double cancel_above = 2.0;  // never
    int calls = 0;
    float last = 0.0f;
    static int report(float fraction, void* self) {
        auto* p = static_cast<Progress*>(self);
        ++p->calls;
        p->last = fraction;
        return fraction > p->cancel_above ? 1 : 0;
    }
};

TEST(CapiLongAudio, AnHourIsAcceptedAndRunsLocalWithinTheArenaBound) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    ASSERT_EQ(parakeet_capi_set_concurrency(c.ctx, 2, 1), 2);
    const auto& audio = hour_of_audio();
    const std::string info = c.info();
    ASSERT_GT(kHourSamples / 160 / 8, info_int(info, "auto_full_max_frames"));  // auto must pick local

    Progress p;
    char* json = parakeet_capi_transcribe_pcm_json_progress(c.ctx, audio.data(), static_cast<int>(audio.size()),
                                                            kRate, 0, &Progress::report, &p);
    ASSERT_NE(json, nullptr) << parakeet_capi_thread_last_error();
    const std::string doc = json;
    parakeet_capi_free_string(json);
    EXPECT_NE(doc.find("\"attention\":{\"mode\":\"local\",\"left\":128,\"right\":128}"), std::string::npos);
    EXPECT_NE(doc.find("\"duration\":3600.000"), std::string::npos);
    EXPECT_EQ(p.last, 1.0f);
    const long long ws = parakeet_capi_pool_working_set_bytes(c.ctx);
    const int64_t bound = arena_bound_bytes(info, kHourSamples, 128, 128);
    // The mel features of the hour alone fill that much: the figure is the hour's, not a clip's.
    EXPECT_GT(ws, (kHourSamples / 160) * info_int(info, "n_mels") * 4);
    EXPECT_LE(ws, bound + arena_bound_bytes(info, 0, 128, 128)) << "the other backend holds at most an empty request";
    std::printf("one hour: pool working set %.1f MB, bound %.1f MB\n", ws / 1e6, bound / 1e6);
}

TEST(CapiLongAudio, CancellingAnHourMidWayFreesTheBackend) {
    Ctx c;
    ASSERT_NE(c.ctx, nullptr) << parakeet_capi_load_error();
    const auto& audio = hour_of_audio();
    Progress p;
    p.cancel_above = 0.1;  // past the front end, inside the first layer
    char* json = parakeet_capi_transcribe_pcm_json_progress(c.ctx, audio.data(), static_cast<int>(audio.size()),
                                                            kRate, 0, &Progress::report, &p);
    EXPECT_EQ(json, nullptr);
    EXPECT_STREQ(parakeet_capi_thread_last_error(), "cancelled by the progress callback");
    EXPECT_GT(p.last, 0.1f);
    EXPECT_LT(p.last, 0.5f);

    // The context runs on the one process-wide backend (K = 1): a lease kept by the cancelled
    // request would block this call for good.
    auto next = std::async(std::launch::async, [&] {
        char* text = parakeet_capi_transcribe_pcm(c.ctx, audio.data(), kRate, kRate, 0);
        const bool ok = text != nullptr;
        parakeet_capi_free_string(text);
        return ok;
    });
    ASSERT_EQ(next.wait_for(std::chrono::seconds(20)), std::future_status::ready);
    EXPECT_TRUE(next.get());
}

}  // namespace
