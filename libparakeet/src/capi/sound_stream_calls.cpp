// The sound stream through the C ABI (parakeet.cpp's ABI 8): options with size versioning, and
// begin / feed / active / drain_scores_json / free on a CED tagger context.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "capi/context.h"
#include "capi/sound_options.h"
#include "capi/sound_scores_json.h"
#include "model/sound/sound_stream.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

struct parakeet_sound_stream {
    parakeet_ctx* ctx;
    std::unique_ptr<pk::SoundStream> stream;
};

namespace {

// The segments as a malloc'd C array (NULL when there are none), labels borrowed from the ctx.
void hand_out(const pk::CedModel& ced, const std::vector<pk::SoundSegment>& segs, parakeet_sound_segment** out,
              int* n_out) {
    *out = nullptr;
    *n_out = 0;
    if (segs.empty()) return;
    auto* arr = static_cast<parakeet_sound_segment*>(std::malloc(segs.size() * sizeof(parakeet_sound_segment)));
    if (arr == nullptr) throw std::bad_alloc();
    for (size_t i = 0; i < segs.size(); ++i)
        arr[i] = parakeet_sound_segment{segs[i].class_index, ced.labels()[static_cast<size_t>(segs[i].class_index)].c_str(),
                                        static_cast<float>(segs[i].start), static_cast<float>(segs[i].end),
                                        segs[i].peak};
    *out = arr;
    *n_out = static_cast<int>(segs.size());
}

}  // namespace

extern "C" {

void parakeet_capi_sound_opts_default(parakeet_sound_opts* o) {
    if (o == nullptr) return;
    const pk::SoundOptions d;
    *o = parakeet_sound_opts{static_cast<int>(sizeof(parakeet_sound_opts)), d.window_sec, d.hop_sec, d.on_threshold,
                             d.off_threshold, d.min_duration_sec, d.top_k};
}

parakeet_sound_stream* parakeet_capi_sound_stream_begin(parakeet_ctx* tagger, const parakeet_sound_opts* o) {
    return guarded<parakeet_sound_stream*>(tagger, nullptr, [&]() -> parakeet_sound_stream* {
        const pk::CedModel& ced = pk::capi::sound_model(tagger);
        auto s = std::make_unique<parakeet_sound_stream>();
        s->ctx = tagger;
        // Each window on a backend leased for it, as a one-shot call runs.
        const pk::SoundScorer scorer = [&ced](const float* samples, int64_t n) { return ced.classify(samples, n); };
        s->stream = std::make_unique<pk::SoundStream>(scorer, ced.config().n_classes, ced.config().sample_rate,
                                                      pk::capi::read_sound_options(o));
        return s.release();
    });
}

int parakeet_capi_sound_stream_feed(parakeet_sound_stream* s, const float* pcm, int n, int is_last,
                                    parakeet_sound_segment** out, int* n_out) {
    if (s == nullptr || out == nullptr || n_out == nullptr) return 1;
    *out = nullptr;
    *n_out = 0;
    return guarded<int>(s->ctx, 1, [&]() -> int {
        hand_out(*s->ctx->sound, s->stream->feed(pcm, n, is_last != 0), out, n_out);
        return 0;
    });
}

int parakeet_capi_sound_stream_active(parakeet_sound_stream* s, parakeet_sound_segment** out, int* n_out) {
    if (s == nullptr || out == nullptr || n_out == nullptr) return 1;
    return guarded<int>(s->ctx, 1, [&]() -> int {
        hand_out(*s->ctx->sound, s->stream->active(), out, n_out);
        return 0;
    });
}

char* parakeet_capi_sound_stream_drain_scores_json(parakeet_sound_stream* s) {
    if (s == nullptr) return nullptr;
    return guarded<char*>(s->ctx, nullptr, [&]() -> char* {
        return pk::capi::to_c_string(pk::capi::scored_windows_json(s->stream->drain_scores(), s->ctx->sound->labels()));
    });
}

void parakeet_capi_free_sound_segments(parakeet_sound_segment* segs) { std::free(segs); }

void parakeet_capi_sound_stream_free(parakeet_sound_stream* s) { delete s; }

}  // extern "C"
