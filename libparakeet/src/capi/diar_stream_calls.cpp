// The diarization stream family of the C ABI (parakeet.cpp's ABI 7 names and shapes):
// diarize_stream_begin / _begin_latency / _feed / _active / _time / _chunk_samples / _free and
// free_diar_segments. The stream itself is pk::DiarStream (model/diar/diar_stream.h).
#include <cstdlib>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

#include "capi/context.h"
#include "model/diar/diar_stream.h"
#include "model/diar/latency_presets.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

struct parakeet_diar_stream {
    parakeet_ctx* ctx;
    std::mutex mu;  // one call at a time on a stream
    pk::DiarStream stream;

    parakeet_diar_stream(parakeet_ctx* c, const pk::DiarModel& m, const pk::DiarStreamingParams& p)
        : ctx(c), stream(m, p) {}
};

namespace {

// The segments as a malloc'd array for the caller (NULL when there are none).
void hand_out(const std::vector<pk::DiarSegment>& segs, parakeet_diar_segment** out, int* n_out) {
    parakeet_diar_segment* a = nullptr;
    if (out != nullptr && !segs.empty()) {
        a = static_cast<parakeet_diar_segment*>(std::malloc(segs.size() * sizeof(parakeet_diar_segment)));
        if (a == nullptr) throw std::bad_alloc();
        for (size_t i = 0; i < segs.size(); ++i)
            a[i] = {segs[i].speaker, static_cast<float>(segs[i].start), static_cast<float>(segs[i].end)};
    }
    if (out != nullptr) *out = a;
    if (n_out != nullptr) *n_out = out != nullptr ? static_cast<int>(segs.size()) : 0;
}

void clear_out(parakeet_diar_segment** out, int* n_out) {
    if (out != nullptr) *out = nullptr;
    if (n_out != nullptr) *n_out = 0;
}

parakeet_diar_stream* begin(parakeet_ctx* ctx, int latency) {
    return guarded<parakeet_diar_stream*>(ctx, nullptr, [&]() -> parakeet_diar_stream* {
        const pk::DiarModel& m = pk::capi::diar_model(ctx);
        const pk::DiarStreamingParams p = pk::diar_latency_preset(latency, m.config().streaming);
        return new parakeet_diar_stream(ctx, m, p);
    });
}

}  // namespace

extern "C" {

parakeet_diar_stream* parakeet_capi_diarize_stream_begin(parakeet_ctx* diar_ctx) {
    return begin(diar_ctx, static_cast<int>(pk::DiarLatency::Model));
}

parakeet_diar_stream* parakeet_capi_diarize_stream_begin_latency(parakeet_ctx* diar_ctx, int latency) {
    return begin(diar_ctx, latency);
}

int parakeet_capi_diarize_stream_feed(parakeet_diar_stream* s, const float* pcm, int n_samples, int is_last,
                                      parakeet_diar_segment** out, int* n_out) {
    clear_out(out, n_out);
    return guarded<int>(s == nullptr ? nullptr : s->ctx, 1, [&]() -> int {
        if (s == nullptr) throw pk::InvalidArgument("diarization stream is NULL");
        const std::lock_guard<std::mutex> lock(s->mu);
        hand_out(s->stream.feed(pcm, n_samples, is_last != 0), out, n_out);
        return 0;
    });
}

int parakeet_capi_diarize_stream_active(parakeet_diar_stream* s, parakeet_diar_segment** out, int* n_out) {
    clear_out(out, n_out);
    return guarded<int>(s == nullptr ? nullptr : s->ctx, 1, [&]() -> int {
        if (s == nullptr) throw pk::InvalidArgument("diarization stream is NULL");
        const std::lock_guard<std::mutex> lock(s->mu);
        hand_out(s->stream.active(), out, n_out);
        return 0;
    });
}

int parakeet_capi_diarize_stream_chunk_samples(parakeet_diar_stream* s) {
    if (s == nullptr) return 0;
    const std::lock_guard<std::mutex> lock(s->mu);
    return static_cast<int>(s->stream.chunk_samples());
}

float parakeet_capi_diarize_stream_time(parakeet_diar_stream* s) {
    if (s == nullptr) return 0.0f;
    const std::lock_guard<std::mutex> lock(s->mu);
    return static_cast<float>(s->stream.time());
}

void parakeet_capi_diarize_stream_free(parakeet_diar_stream* s) { delete s; }

void parakeet_capi_free_diar_segments(parakeet_diar_segment* segs) { std::free(segs); }

}  // extern "C"
