// The batch calls (parakeet_capi_transcribe_pcm_batch*, which run their clips in batched passes,
// model/offline/request_set.h) give, clip by clip, the single calls' texts and JSON documents:
// 1 to 24 clips of mixed lengths (nothing, a tenth of a second to 5 s, and 31 s, which runs
// alone), every head of the TDT, RNN-T, CTC, hybrid, cache-aware and prompt fixture models
// (with locales), at 1 and 2 threads with 1 and 2 backends. A failing clip fails the call with
// its single call's error and code, prefixed "clip i: ", the first failing clip's when several
// fail, whatever fails first in the work.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "capi_test_support.h"
#include "nemo_fixtures.h"
#include "parakeet_capi.h"
#include "speech_clips.h"

namespace {

using capi_test::take;

using speech_clips::cut;
using speech_clips::kRate;
using speech_clips::wav;

// A call's clips, in both of the ABI's layouts.
struct Batch {
    std::vector<std::vector<float>> clips;
    std::vector<const float*> pointers;
    std::vector<int> lengths;
    std::vector<float> concat;

    explicit Batch(std::vector<std::vector<float>> c) : clips(std::move(c)) {
        for (const auto& clip : clips) {
            pointers.push_back(clip.data());
            lengths.push_back(static_cast<int>(clip.size()));
            concat.insert(concat.end(), clip.begin(), clip.end());
        }
    }
    int n() const { return static_cast<int>(clips.size()); }
};

// Sets of 1, 3 and 24 clips: one; nothing, a tenth of a second and 4 s; 22 of 0.05 to 5 s
// (more than a batch holds), nothing and a 31 s clip.
std::vector<Batch> batches() {
    std::vector<Batch> b;
    b.emplace_back(cut(1, 2.0, 2.0, 1));
    b.emplace_back(std::vector<std::vector<float>>{{}, cut(1, 0.1, 0.1, 2)[0], cut(1, 4.0, 4.0, 3)[0]});
    std::vector<std::vector<float>> many = cut(22, 0.05, 5.0, 4);
    std::vector<float> long_clip = wav("long_30s_16k.wav");
    long_clip.insert(long_clip.end(), many[0].begin(), many[0].end());  // past 30 s
    many.insert(many.begin() + 5, long_clip);
    many.insert(many.begin() + 9, std::vector<float>{});
    b.emplace_back(std::move(many));
    return b;
}

// A model and the heads (decoder numbers) and locales its calls take.
struct Case {
    const char* model;
    std::vector<int> decoders;
    std::vector<const char*> locales;  // NULL: the plain calls
};

const Case kCases[] = {
    {"tdt", {PARAKEET_DECODER_DEFAULT}, {nullptr}},
    {"rnnt", {PARAKEET_DECODER_DEFAULT}, {nullptr}},
    {"ctc", {PARAKEET_DECODER_DEFAULT}, {nullptr}},
    {"hybrid_tdt_ctc", {PARAKEET_DECODER_TRANSDUCER, PARAKEET_DECODER_CTC}, {nullptr}},
    {"hybrid_rnnt_ctc", {PARAKEET_DECODER_TRANSDUCER, PARAKEET_DECODER_CTC}, {nullptr}},
    {"ca_tdt", {PARAKEET_DECODER_DEFAULT}, {nullptr}},
    {"ca_prompt", {PARAKEET_DECODER_TRANSDUCER, PARAKEET_DECODER_CTC}, {"de-DE", "ja-JP"}},
};

capi_test::Ctx load(const char* model, int threads) {
    const std::string path = nemo_fixtures::data_dir() + "/nemo/" + model + "/model.gguf";
    const std::string options = "{\"threads\": " + std::to_string(threads) + "}";
    capi_test::Ctx c(parakeet_capi_load_with(path.c_str(), options.c_str()));
    if (!c) ADD_FAILURE() << parakeet_capi_load_error();
    return c;
}

// What the single calls give a batch: each clip's text, and the JSON array of its documents
// (plain calls only: there is no single JSON call with a locale).
struct Single {
    std::vector<std::string> texts;
    std::string documents;
};

Single single_calls(parakeet_ctx* ctx, const Batch& b, int decoder, const char* lang) {
    Single s;
    s.documents = "[";
    for (int i = 0; i < b.n(); ++i) {
        const float* p = b.pointers[i];
        const int n = b.lengths[i];
        s.texts.push_back(take(lang ? parakeet_capi_transcribe_pcm_lang(ctx, p, n, kRate, decoder, lang)
                                    : parakeet_capi_transcribe_pcm(ctx, p, n, kRate, decoder)));
        if (!lang) s.documents += (i ? "," : "") + take(parakeet_capi_transcribe_pcm_json(ctx, p, n, kRate, decoder));
    }
    s.documents += "]";
    return s;
}

// The batch calls on `b` give what the single calls gave (`want`).
void expect_batch_calls_give(parakeet_ctx* ctx, const Batch& b, int decoder, const char* lang, const Single& want,
                             const std::string& what) {
    std::vector<char*> out(b.clips.size(), nullptr);
    ASSERT_EQ(parakeet_capi_transcribe_pcm_batch_lang(ctx, b.pointers.data(), b.lengths.data(), b.n(), kRate, decoder,
                                                      lang, out.data()),
              0)
        << what << ": " << parakeet_capi_thread_last_error();
    for (int i = 0; i < b.n(); ++i) EXPECT_EQ(take(out[i]), want.texts[i]) << what << ", clip " << i;
    if (lang) return;
    EXPECT_EQ(take(parakeet_capi_transcribe_pcm_batch_json(ctx, b.concat.data(), b.lengths.data(), b.n(), kRate,
                                                           decoder)),
              want.documents)
        << what;
}

TEST(CapiBatchCalls, EveryClipGetsItsSingleCallsResult) {
    const std::vector<Batch> sets = batches();
    for (const Case& c : kCases) {
        // The single calls on one thread, no pool: the reference.
        const capi_test::Ctx reference = load(c.model, 1);
        ASSERT_TRUE(reference);
        for (const int decoder : c.decoders) {
            for (const char* lang : c.locales) {
                std::vector<Single> want;
                size_t chars = 0;
                for (const Batch& b : sets) {
                    want.push_back(single_calls(reference.get(), b, decoder, lang));
                    for (const std::string& t : want.back().texts) chars += t.size();
                }
                ASSERT_GT(chars, 100u) << c.model << ": the clips say little, the comparison would say little";
                const std::string head = std::string(c.model) + " decoder " + std::to_string(decoder) + " " +
                                         (lang ? lang : "-") + ", ";
                for (const int threads : {1, 2}) {
                    const capi_test::Ctx ctx = load(c.model, threads);
                    for (const int backends : {1, 2}) {
                        ASSERT_EQ(parakeet_capi_set_concurrency(ctx.get(), backends, threads), backends);
                        for (size_t s = 0; s < sets.size(); ++s)
                            expect_batch_calls_give(ctx.get(), sets[s], decoder, lang, want[s],
                                                    head + "set " + std::to_string(s) + ", " +
                                                        std::to_string(threads) + " threads x " +
                                                        std::to_string(backends));
                    }
                }
            }
        }
    }
}

// The single call's error of clip i, as the batch call reports it, and its code.
struct Failure {
    std::string message;
    int code;
};

Failure single_failure(parakeet_ctx* ctx, const float* samples, int n, int rate, int clip) {
    EXPECT_EQ(parakeet_capi_transcribe_pcm(ctx, samples, n, rate, 0), nullptr) << "clip " << clip << " must fail";
    return {"clip " + std::to_string(clip) + ": " + parakeet_capi_thread_last_error(),
            parakeet_capi_thread_last_error_code()};
}

Failure batch_failure(parakeet_ctx* ctx, const Batch& b, int rate) {
    std::vector<char*> out(b.clips.size(), reinterpret_cast<char*>(1));
    EXPECT_NE(parakeet_capi_transcribe_pcm_batch(ctx, b.pointers.data(), b.lengths.data(), b.n(), rate, 0, out.data()),
              0);
    for (char* o : out) EXPECT_EQ(o, nullptr) << "a failed call leaves nothing to free";
    return {parakeet_capi_thread_last_error(), parakeet_capi_thread_last_error_code()};
}

void expect_failure(const Failure& got, const Failure& want, const std::string& what) {
    EXPECT_EQ(got.message, want.message) << what;
    EXPECT_EQ(got.code, want.code) << what;
}

TEST(CapiBatchCalls, AFailingClipFailsTheCallWithItsOwnError) {
    const capi_test::Ctx ctx = load("hybrid_tdt_ctc", 2);
    ASSERT_TRUE(ctx);
    for (const int backends : {1, 2}) {
        ASSERT_EQ(parakeet_capi_set_concurrency(ctx.get(), backends, 1), backends);
        const std::string on = " on " + std::to_string(backends);
        // A NaN (found in the batch's front end) before a NULL clip (found by the checks before
        // any work): the NaN's clip is the first to fail.
        Batch b(cut(20, 0.5, 3.0, 7));
        b.clips[2][300] = std::nanf("");
        const Failure nan_clip = single_failure(ctx.get(), b.pointers[2], b.lengths[2], kRate, 2);
        EXPECT_NE(nan_clip.message.find("not a finite number"), std::string::npos) << nan_clip.message;
        b.pointers[4] = nullptr;
        expect_failure(batch_failure(ctx.get(), b, kRate), nan_clip, "a NaN before a NULL clip" + on);
        // The other way round: the NULL clip first.
        b.pointers[1] = nullptr;
        const Failure null_clip = single_failure(ctx.get(), nullptr, b.lengths[1], kRate, 1);
        EXPECT_EQ(null_clip.code, PARAKEET_ERROR_INVALID_ARGUMENT);
        expect_failure(batch_failure(ctx.get(), b, kRate), null_clip, "a NULL clip before a NaN" + on);
        // A bad rate fails every clip: the first names it.
        const Batch good(cut(3, 0.5, 1.0, 8));
        for (const int rate : {0, 500, -16000})
            expect_failure(batch_failure(ctx.get(), good, rate),
                           single_failure(ctx.get(), good.pointers[0], good.lengths[0], rate, 0),
                           "rate " + std::to_string(rate) + on);
        // A negative length (the pointers' call; the concatenated call refuses it before any work).
        Batch negative(cut(3, 0.5, 1.0, 9));
        negative.lengths[2] = -1;
        expect_failure(batch_failure(ctx.get(), negative, kRate),
                       single_failure(ctx.get(), negative.pointers[2], -1, kRate, 2), "a negative length" + on);
    }
    // A head the model lacks fails the first clip, as its single call does.
    const capi_test::Ctx tdt = load("tdt", 1);
    const Batch two(cut(2, 0.5, 1.0, 10));
    const float* p = two.pointers[0];
    const int n = two.lengths[0];
    EXPECT_EQ(parakeet_capi_transcribe_pcm(tdt.get(), p, n, kRate, PARAKEET_DECODER_CTC), nullptr);
    const std::string want = std::string("clip 0: ") + parakeet_capi_thread_last_error();
    std::vector<char*> out(2, nullptr);
    EXPECT_NE(parakeet_capi_transcribe_pcm_batch(tdt.get(), two.pointers.data(), two.lengths.data(), 2, kRate,
                                                 PARAKEET_DECODER_CTC, out.data()),
              0);
    EXPECT_EQ(std::string(parakeet_capi_thread_last_error()), want);
}

}  // namespace
