// Speaker-attributed streams through the C ABI (parakeet.cpp's ABI 7 sas_stream_begin,
// _begin_latency, _feed, _free) around pk::SasStream (model/sas/sas_stream.h).
//
// Errors: input (NULL handles, a wrong-kind context, the buffer, non-finite samples, a feed
// after is_last) and transcription failures go to the ASR context; the diarization model's own
// failures (a model whose stream is refused, a failing chunk) to the diarization context; a
// success clears the ASR context's error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capi/context.h"
#include "capi/sas_results.h"
#include "model/diar/latency_presets.h"
#include "model/sas/sas_stream.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

struct parakeet_sas_stream {
    parakeet_ctx* asr;
    parakeet_ctx* diar;
    std::mutex mu;  // one call at a time on a stream
    pk::SasStream stream;
    bool finished = false;

    parakeet_sas_stream(parakeet_ctx* a, parakeet_ctx* d, const pk::DiarStreamingParams& p)
        : asr(a), diar(d), stream(*a->model, *d->diar, p) {}
};

namespace {

parakeet_sas_stream* begin(parakeet_ctx* asr, parakeet_ctx* diar, int latency) {
    pk::DiarStreamingParams params;
    const bool inputs_ok = guarded<bool>(asr, false, [&] {
        pk::capi::asr_model(asr);
        if (diar == nullptr) throw pk::InvalidArgument("diarization context is NULL");
        if (diar->kind != pk::ModelKind::Diarization)
            throw pk::Unsupported("the second context holds no diarization model");
        params = pk::diar_latency_preset(latency, diar->diar->config().streaming);
        return true;
    });
    if (!inputs_ok) return nullptr;
    return guarded<parakeet_sas_stream*>(diar, nullptr, [&] { return new parakeet_sas_stream(asr, diar, params); });
}

void check_samples(const float* pcm, int n_samples) {
    if (n_samples < 0 || (n_samples > 0 && pcm == nullptr)) throw pk::InvalidArgument("invalid samples buffer");
    for (int i = 0; i < n_samples; ++i)
        if (!std::isfinite(pcm[i]))
            throw pk::InvalidAudio("sample " + std::to_string(i) + " is not a finite number (NaN or Inf)");
}

}  // namespace

extern "C" {

parakeet_sas_stream* parakeet_capi_sas_stream_begin(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx) {
    return begin(asr_ctx, diar_ctx, static_cast<int>(pk::DiarLatency::Model));
}

parakeet_sas_stream* parakeet_capi_sas_stream_begin_latency(parakeet_ctx* asr_ctx, parakeet_ctx* diar_ctx,
                                                            int latency) {
    return begin(asr_ctx, diar_ctx, latency);
}

int parakeet_capi_sas_stream_feed(parakeet_sas_stream* s, const float* pcm, int n_samples, int is_last,
                                  parakeet_sas_result** out, int* n_out) {
    if (out != nullptr) *out = nullptr;
    if (n_out != nullptr) *n_out = 0;
    parakeet_ctx* asr = s == nullptr ? nullptr : s->asr;
    std::unique_lock<std::mutex> lock;
    const bool inputs_ok = guarded<bool>(asr, false, [&] {
        if (s == nullptr) throw pk::InvalidArgument("SAS stream is NULL");
        lock = std::unique_lock<std::mutex>(s->mu);
        if (s->finished) throw pk::InvalidArgument("stream already finished");
        check_samples(pcm, n_samples);
        return true;
    });
    if (!inputs_ok) return 1;
    // The audio goes through one diarizer frame at a time, the commit rule checked after each:
    // the diarized time advances by whole chunks, so every chunk's end is seen, and which words
    // commit does not depend on how the caller cuts the audio into feeds.
    const int64_t n = n_samples, step = s->stream.step_samples();
    std::vector<pk::TranscriptWord> words;
    std::vector<int> speakers;
    int64_t at = 0;
    do {
        const float* piece = pcm == nullptr ? nullptr : pcm + at;
        const int64_t len = std::min(step, n - at);
        const bool last = is_last != 0 && at + len == n;
        const bool diarized = guarded<bool>(s->diar, false, [&] {
            s->stream.diarize(piece, len, last);
            return true;
        });
        if (!diarized) return 1;
        const bool committed = guarded<bool>(asr, false, [&] {
            if (last) s->finished = true;  // the diarizer has ended: nothing more may come
            pk::SasWords w = s->stream.commit(piece, len, last);
            words.insert(words.end(), w.words.begin(), w.words.end());
            speakers.insert(speakers.end(), w.speakers.begin(), w.speakers.end());
            return true;
        });
        if (!committed) return 1;
        at += len;
    } while (at < n);
    return guarded<int>(asr, 1, [&] {
        const std::vector<pk::SasItem> items = pk::speaker_utterances(words, speakers);
        if (out != nullptr) *out = pk::capi::to_c_results(items);
        if (n_out != nullptr) *n_out = out != nullptr ? static_cast<int>(items.size()) : 0;
        return 0;
    });
}

void parakeet_capi_sas_stream_free(parakeet_sas_stream* s) { delete s; }

}  // extern "C"
