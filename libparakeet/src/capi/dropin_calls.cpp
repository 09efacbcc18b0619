// parakeet.cpp's remaining offline entry points (see parakeet_capi.h, "parakeet.cpp's offline
// calls"): batches (and their _lang variants), the CTC log-probabilities and shutdown.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <vector>

#include "capi/context.h"
#include "capi/decoder_number.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "model/offline/request_set.h"
#include "parakeet_capi.h"
#include "runtime/backend.h"

using pk::capi::guarded;

namespace {

// Transcribes the clips with the options of a batch call (the head `decoder`, the locale
// `lang`): batched where the request batcher would batch them (model/offline/request_set.h),
// concurrently on the context's pool. Throws the failure of the first clip that fails, naming it.
std::vector<pk::Transcript> transcribe_all(parakeet_ctx* ctx, std::vector<pk::OfflineRequest>& clips, int sample_rate,
                                           int decoder, const char* lang) {
    const pk::Model& model = pk::capi::asr_model(ctx);
    pk::RequestOptions options(pk::capi::decoder_from_int(decoder));
    if (lang != nullptr) options.language = lang;  // a prompt model's locale (NULL, "": its default)
    for (pk::OfflineRequest& c : clips) {
        c.sample_rate = sample_rate;
        c.options = &options;
    }
    pk::transcribe_request_set(model, clips);
    std::vector<pk::Transcript> out;
    for (size_t i = 0; i < clips.size(); ++i) {
        if (!clips[i].error) {
            out.push_back(std::move(clips[i].transcript));
            continue;
        }
        try {
            std::rethrow_exception(clips[i].error);
        } catch (const std::exception& e) {
            throw pk::Error(pk::capi::error_code_of(e), "clip " + std::to_string(i) + ": " + e.what());
        }
    }
    return out;
}

// The clips of a batch call, checked: n_clips >= 0, no NULL arrays, no negative lengths. Their
// rate and options are transcribe_all's to set.
std::vector<pk::OfflineRequest> clips_from_pointers(const float* const* samples, const int* n_samples, int n_clips) {
    if (n_clips < 0) throw pk::InvalidArgument("n_clips is negative (" + std::to_string(n_clips) + ")");
    if (n_clips > 0 && (samples == nullptr || n_samples == nullptr))
        throw pk::InvalidArgument("the samples or n_samples array is NULL");
    std::vector<pk::OfflineRequest> clips;
    for (int i = 0; i < n_clips; ++i) clips.push_back({samples[i], n_samples[i], 0, nullptr, {}, nullptr});
    return clips;
}

std::vector<pk::OfflineRequest> clips_from_concat(const float* concat, const int* n_samples, int n_clips) {
    if (n_clips < 0) throw pk::InvalidArgument("n_clips is negative (" + std::to_string(n_clips) + ")");
    if (n_clips > 0 && n_samples == nullptr) throw pk::InvalidArgument("the n_samples array is NULL");
    std::vector<pk::OfflineRequest> clips;
    int64_t offset = 0;
    for (int i = 0; i < n_clips; ++i) {
        if (n_samples[i] < 0)
            throw pk::InvalidArgument("clip " + std::to_string(i) + ": the number of samples is negative");
        if (n_samples[i] > 0 && concat == nullptr) throw pk::InvalidArgument("the sample buffer is NULL");
        clips.push_back({concat == nullptr ? nullptr : concat + offset, n_samples[i], 0, nullptr, {}, nullptr});
        offset += n_samples[i];
    }
    return clips;
}

int batch_text(parakeet_ctx* ctx, const float* const* samples, const int* n_samples, int n_clips, int sample_rate,
               int decoder, const char* lang, char** out) {
    if (out != nullptr)
        for (int i = 0; i < n_clips; ++i) out[i] = nullptr;
    return guarded<int>(ctx, 1, [&] {
        pk::capi::asr_model(ctx);
        if (out == nullptr && n_clips > 0) throw pk::InvalidArgument("out is NULL");
        std::vector<pk::OfflineRequest> clips = clips_from_pointers(samples, n_samples, n_clips);
        const auto results = transcribe_all(ctx, clips, sample_rate, decoder, lang);
        std::vector<char*> texts;
        try {
            for (const auto& r : results) texts.push_back(pk::capi::to_c_string(r.text));
        } catch (...) {
            for (char* t : texts) std::free(t);
            throw;
        }
        std::copy(texts.begin(), texts.end(), out);
        return 0;
    });
}

char* batch_json(parakeet_ctx* ctx, const float* concat, const int* n_samples, int n_clips, int sample_rate,
                 int decoder, const char* lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        pk::capi::asr_model(ctx);
        std::vector<pk::OfflineRequest> clips = clips_from_concat(concat, n_samples, n_clips);
        const auto results = transcribe_all(ctx, clips, sample_rate, decoder, lang);
        std::string doc = "[";
        for (size_t i = 0; i < results.size(); ++i) {
            if (i > 0) doc += ',';
            doc += pk::capi::transcript_to_json(results[i], static_cast<double>(clips[i].n) / sample_rate);
        }
        doc += ']';
        return pk::capi::to_c_string(doc);
    });
}

}  // namespace

extern "C" {

int parakeet_capi_transcribe_pcm_batch(parakeet_ctx* ctx, const float* const* samples, const int* n_samples,
                                       int n_clips, int sample_rate, int decoder, char** out) {
    return batch_text(ctx, samples, n_samples, n_clips, sample_rate, decoder, nullptr, out);
}

int parakeet_capi_transcribe_pcm_batch_lang(parakeet_ctx* ctx, const float* const* samples, const int* n_samples,
                                            int n_clips, int sample_rate, int decoder, const char* target_lang,
                                            char** out) {
    return batch_text(ctx, samples, n_samples, n_clips, sample_rate, decoder, target_lang, out);
}

char* parakeet_capi_transcribe_pcm_batch_json(parakeet_ctx* ctx, const float* samples_concat, const int* n_samples,
                                              int n_clips, int sample_rate, int decoder) {
    return batch_json(ctx, samples_concat, n_samples, n_clips, sample_rate, decoder, nullptr);
}

char* parakeet_capi_transcribe_pcm_batch_json_lang(parakeet_ctx* ctx, const float* samples_concat,
                                                   const int* n_samples, int n_clips, int sample_rate, int decoder,
                                                   const char* target_lang) {
    return batch_json(ctx, samples_concat, n_samples, n_clips, sample_rate, decoder, target_lang);
}

int parakeet_capi_transcribe_pcm_logits(parakeet_ctx* ctx, const float* samples, int n_samples, int sample_rate,
                                        float** out_logits, int* out_T, int* out_vocab_plus_1) {
    if (ctx == nullptr || out_logits == nullptr || out_T == nullptr || out_vocab_plus_1 == nullptr) {
        pk::capi::set_error(ctx, pk::ErrorCode::InvalidArgument, "the context or an output pointer is NULL");
        return 1;
    }
    *out_logits = nullptr;
    *out_T = 0;
    *out_vocab_plus_1 = 0;
    return guarded<int>(ctx, 1, [&] {
        const pk::CtcLogProbs lp = pk::capi::asr_model(ctx).ctc_log_probs(samples, n_samples, sample_rate, pk::RequestOptions{});
        const size_t bytes = std::max<size_t>(1, lp.data.size()) * sizeof(float);
        auto* m = static_cast<float*>(std::malloc(bytes));
        if (m == nullptr) throw std::bad_alloc();
        if (!lp.data.empty()) std::memcpy(m, lp.data.data(), lp.data.size() * sizeof(float));
        *out_logits = m;
        *out_T = static_cast<int>(lp.frames);
        *out_vocab_plus_1 = lp.classes;
        return 0;
    });
}

void parakeet_capi_free_logits(float* logits) { std::free(logits); }

void parakeet_capi_shutdown(void) { pk::release_default_backend_memory(); }

}  // extern "C"

extern "C" {

const char* parakeet_version(void) { return PARAKEET_VERSION_STRING; }

int parakeet_transcribe_file(const char* model_path, const char* wav_path, char** out_text) {
    if (out_text == nullptr) {
        pk::capi::set_error(nullptr, pk::ErrorCode::InvalidArgument, "out_text is NULL");
        return 1;
    }
    *out_text = nullptr;
    parakeet_ctx* ctx = parakeet_capi_load(model_path);
    if (ctx == nullptr) {
        pk::capi::set_error(nullptr, pk::capi::thread_error_code(), parakeet_capi_load_error());
        return 1;
    }
    *out_text = parakeet_capi_transcribe_path(ctx, wav_path, PARAKEET_DECODER_DEFAULT);  // sets the error
    parakeet_capi_free(ctx);
    return *out_text != nullptr ? 0 : 1;
}

void parakeet_free_string(char* s) { parakeet_capi_free_string(s); }

}  // extern "C"
