// The scene stream through the C ABI (parakeet.cpp's ABI 8/9): options with size versioning,
// begin / begin_speaker / feed_json / drain_scores_json / last_error / free around
// pk::SceneStream (model/scene/scene_stream.h).
//
// Errors: begin's go on the context concerned (parakeet.cpp's checks, in its order); a feed's
// on the stream (last_error) and, for a part's failure, also on that part's context.
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>

#include "capi/context.h"
#include "capi/sound_options.h"
#include "capi/sound_scores_json.h"
#include "capi/speaker_registry_handle.h"
#include "model/diar/latency_presets.h"
#include "model/scene/scene_json.h"
#include "model/scene/scene_stream.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

struct parakeet_scene_stream {
    parakeet_ctx *asr = nullptr, *diar = nullptr, *tagger = nullptr, *speaker = nullptr;
    std::mutex mu;  // one call at a time on a stream
    std::unique_ptr<pk::SceneStream> stream;
    std::string last_error;
};

namespace {

// Whether the caller's struct (o->size bytes) reaches the end of `field_end` bytes.
bool covers(const parakeet_scene_opts* o, size_t field_end) {
    return o->size >= 0 && static_cast<size_t>(o->size) >= field_end;
}

#define PK_SCENE_COVERS(o, field) covers(o, offsetof(parakeet_scene_opts, field) + sizeof((o)->field))

struct SceneOptions {
    int latency = static_cast<int>(pk::DiarLatency::Model);
    pk::SoundOptions sound;
    int flags = 0;
    pk::speaker::LiveNamingOptions naming;
};

// A speaker field that is 0 or not covered keeps its default.
void read_speaker_field(const parakeet_scene_opts* o, bool covered, float value, float& out) {
    if (o != nullptr && covered && value != 0.f) out = value;
}

SceneOptions read_options(const parakeet_scene_opts* o) {
    SceneOptions out;
    if (o == nullptr) return out;
    if (PK_SCENE_COVERS(o, diar_latency)) out.latency = o->diar_latency;
    if (PK_SCENE_COVERS(o, sound)) out.sound = pk::capi::read_sound_options(&o->sound);
    if (PK_SCENE_COVERS(o, flags)) out.flags = o->flags;
    read_speaker_field(o, PK_SCENE_COVERS(o, speaker_accept_threshold), o->speaker_accept_threshold, out.naming.accept);
    read_speaker_field(o, PK_SCENE_COVERS(o, speaker_margin), o->speaker_margin, out.naming.margin);
    read_speaker_field(o, PK_SCENE_COVERS(o, speaker_min_voice_sec), o->speaker_min_voice_sec, out.naming.min_voice_sec);
    read_speaker_field(o, PK_SCENE_COVERS(o, speaker_refresh_sec), o->speaker_refresh_sec, out.naming.refresh_sec);
    read_speaker_field(o, PK_SCENE_COVERS(o, speaker_max_voice_sec), o->speaker_max_voice_sec, out.naming.max_voice_sec);
    return out;
}

#undef PK_SCENE_COVERS

// Runs `check` guarded on ctx (skipped for NULL ctx): false when it threw.
template <class Check>
bool checked(parakeet_ctx* ctx, Check&& check) {
    return ctx == nullptr || guarded<bool>(ctx, false, [&] {
               check();
               return true;
           });
}

// The speaker part: embeddings from the speaker context, matches from the registry under its lock.
void add_speaker_part(pk::SceneParts& parts, parakeet_ctx* speaker, parakeet_speaker_registry* reg) {
    const pk::speaker::SpeakerEncoder& enc = pk::capi::speaker_model(speaker);
    parts.speaker_embed = [&enc, rate = parts.sample_rate](const float* s, int64_t n) { return enc.embed(s, n, rate); };
    parts.speaker_identify = [reg](const std::vector<float>& e, float accept, float margin) {
        std::lock_guard<std::mutex> lock(reg->mu);
        return reg->registry.identify(e.data(), accept, margin);
    };
}

parakeet_scene_stream* begin(parakeet_ctx* asr, parakeet_ctx* diar, parakeet_ctx* tagger, parakeet_ctx* speaker,
                             parakeet_speaker_registry* reg, const parakeet_scene_opts* o) {
    if (asr == nullptr && diar == nullptr && tagger == nullptr && speaker == nullptr) return nullptr;
    parakeet_ctx* first = asr != nullptr ? asr : diar != nullptr ? diar : tagger != nullptr ? tagger : speaker;
    const SceneOptions opts = read_options(o);
    pk::SceneParts parts;
    parts.naming = opts.naming;
    parts.sound = opts.sound;
    const bool ok =
        checked(speaker,
                [&] {
                    if (diar == nullptr) throw pk::InvalidArgument("speaker identification needs a diarization model");
                    if (reg == nullptr) throw pk::InvalidArgument("speaker identification needs a registry");
                }) &&
        checked(asr, [&] { parts.asr = &pk::capi::asr_model(asr); }) &&
        checked(diar, [&] { parts.diar = &pk::capi::diar_model(diar); }) &&
        checked(tagger, [&] { pk::capi::sound_model(tagger); }) &&
        checked(speaker, [&] { pk::capi::speaker_model(speaker); }) &&
        checked(first, [&] {
            if (opts.flags != 0) throw pk::InvalidArgument("scene flags must be 0");
        }) &&
        checked(diar, [&] { parts.diar_params = pk::diar_latency_preset(opts.latency, parts.diar->config().streaming); }) &&
        checked(speaker, [&] {
            pk::speaker::validate_live_naming(opts.naming);
            std::lock_guard<std::mutex> lock(reg->mu);
            pk::capi::check_registry_encoder(reg->registry, speaker);
            add_speaker_part(parts, speaker, reg);
        }) &&
        checked(tagger, [&] {
            const pk::CedModel& ced = pk::capi::sound_model(tagger);
            pk::validate_sound_options(opts.sound, ced.config().n_classes);
            parts.sound_scorer = [&ced](const float* s, int64_t n) { return ced.classify(s, n); };
            parts.sound_classes = ced.config().n_classes;
            parts.sound_rate = ced.config().sample_rate;
        });
    if (!ok) return nullptr;
    return guarded<parakeet_scene_stream*>(diar != nullptr ? diar : first, nullptr, [&] {
        auto s = std::make_unique<parakeet_scene_stream>();
        s->asr = asr;
        s->diar = diar;
        s->tagger = tagger;
        s->speaker = speaker;
        s->stream = std::make_unique<pk::SceneStream>(parts);
        return s.release();
    });
}

// The tagger's class labels (none without a tagger).
const std::vector<std::string>& labels(const parakeet_scene_stream* s) {
    static const std::vector<std::string> kNone;
    return s->tagger != nullptr ? s->tagger->sound->labels() : kNone;
}

parakeet_ctx* part_ctx(const parakeet_scene_stream* s, pk::ScenePart part) {
    switch (part) {
        case pk::ScenePart::Diarization: return s->diar;
        case pk::ScenePart::Speaker: return s->speaker;
        case pk::ScenePart::Asr: return s->asr;
        case pk::ScenePart::Sound: return s->tagger;
        case pk::ScenePart::None: break;
    }
    return nullptr;
}

}  // namespace

extern "C" {

void parakeet_capi_scene_opts_default(parakeet_scene_opts* o) {
    if (o == nullptr) return;
    const pk::speaker::LiveNamingOptions n;
    *o = parakeet_scene_opts{};
    o->size = static_cast<int>(sizeof(parakeet_scene_opts));
    o->diar_latency = static_cast<int>(pk::DiarLatency::Model);
    parakeet_capi_sound_opts_default(&o->sound);
    o->flags = 0;
    o->speaker_accept_threshold = n.accept;
    o->speaker_margin = n.margin;
    o->speaker_min_voice_sec = n.min_voice_sec;
    o->speaker_refresh_sec = n.refresh_sec;
    o->speaker_max_voice_sec = n.max_voice_sec;
}

parakeet_scene_stream* parakeet_capi_scene_stream_begin(parakeet_ctx* asr, parakeet_ctx* diar, parakeet_ctx* tagger,
                                                        const parakeet_scene_opts* o) {
    return begin(asr, diar, tagger, nullptr, nullptr, o);
}

parakeet_scene_stream* parakeet_capi_scene_stream_begin_speaker(parakeet_ctx* asr, parakeet_ctx* diar,
                                                                parakeet_ctx* tagger, parakeet_ctx* speaker,
                                                                parakeet_speaker_registry* registry,
                                                                const parakeet_scene_opts* o) {
    return begin(asr, diar, tagger, speaker, speaker != nullptr ? registry : nullptr, o);
}

char* parakeet_capi_scene_stream_feed_json(parakeet_scene_stream* s, const float* pcm, int n, int is_last) {
    if (s == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(s->mu);
    // guarded() records the failure on the thread (ctx NULL); the stream and the failing part's
    // context get the message below.
    char* out = guarded<char*>(nullptr, nullptr, [&] {
        const pk::SceneUpdate u = s->stream->feed(pcm, n, is_last != 0);
        return pk::capi::to_c_string(pk::scene_update_json(u, s->stream->has_speaker(), labels(s)));
    });
    if (out != nullptr) {
        s->last_error.clear();
        return out;
    }
    s->last_error = pk::capi::thread_error();
    if (parakeet_ctx* ctx = part_ctx(s, s->stream->failed_part()))
        pk::capi::set_error(ctx, pk::capi::thread_error_code(), s->last_error);
    return nullptr;
}

char* parakeet_capi_scene_stream_drain_scores_json(parakeet_scene_stream* s) {
    if (s == nullptr) return nullptr;
    std::lock_guard<std::mutex> lock(s->mu);
    return guarded<char*>(s->tagger, nullptr, [&] {
        return pk::capi::to_c_string(pk::capi::scored_windows_json(s->stream->drain_scores(), labels(s)));
    });
}

const char* parakeet_capi_scene_stream_last_error(parakeet_scene_stream* s) {
    return s == nullptr ? "" : s->last_error.c_str();
}

void parakeet_capi_scene_stream_free(parakeet_scene_stream* s) { delete s; }

}  // extern "C"
