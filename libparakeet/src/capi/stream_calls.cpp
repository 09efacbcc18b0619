// The streaming entry points of the C ABI (the handle: capi/stream_handle.h).
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>

#include "capi/context.h"
#include "capi/stream_group.h"
#include "capi/stream_handle.h"
#include "capi/stream_options.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "common/json_writer.h"
#include "model/stream/cache_aware_stream.h"
#include "model/stream/chunked_stream.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

std::string contexts_of(const pk::Model& model) {
    std::string out;
    for (const pk::AttContext& c : model.config().enc.att_contexts)
        out += (out.empty() ? "" : ", ") + ("[" + std::to_string(c.left) + ", " + std::to_string(c.right) + "]");
    return out;
}

// A cache-aware model streams with one of its attention contexts (the first by default), an
// offline model with NeMo's buffered windows; each refuses the other's options.
std::unique_ptr<pk::LiveStream> make_stream(const pk::Model& model, const pk::capi::StreamOptions& o) {
    if (model.config().enc.chunked_limited()) {
        if (o.has_window)
            throw pk::InvalidArgument("stream options: chunk_sec, left_sec and right_sec apply to offline models; "
                                      "this cache-aware model streams with att_context, one of " +
                                      contexts_of(model));
        const pk::AttContext c = o.att_context.value_or(model.config().enc.att_contexts.front());
        return std::make_unique<pk::CacheAwareStream>(model, c, o.settings.decoder, o.language);
    }
    if (model.config().prompt.present)
        throw pk::Unsupported("buffered streaming of a prompt-conditioned model without cache-aware attention "
                              "is not supported");
    if (o.att_context)
        throw pk::InvalidArgument("stream options: att_context applies to cache-aware streaming models; this model "
                                  "is offline (its streams take chunk_sec, left_sec, right_sec)");
    return std::make_unique<pk::ChunkedStream>(model, o.settings);
}

parakeet_stream* begin(parakeet_ctx* ctx, const pk::capi::StreamOptions& options) {
    pk::Model& model = pk::capi::asr_model(ctx);
    auto s = std::make_unique<parakeet_stream>();
    s->ctx = ctx;
    s->stream = make_stream(model, options);
    return s.release();
}

// Runs one feed or finalize under the stream's lock, queueing its events.
template <class Step>
pk::StreamUpdate step(parakeet_stream* s, Step&& run) {
    std::lock_guard<std::mutex> lock(s->mu);
    pk::StreamUpdate u = run(*s->stream);
    for (const pk::StreamEvent& e : u.events)
        s->events.push_back({e.token, e.is_eob ? 1 : 0, e.frame, static_cast<float>(e.frame * s->stream->frame_sec())});
    return u;
}

int event_bits(const pk::StreamUpdate& u) {
    int bits = 0;
    for (const pk::StreamEvent& e : u.events) bits |= e.is_eob ? PARAKEET_EVENT_EOB : PARAKEET_EVENT_EOU;
    return bits;
}

// A stream in a group takes its audio, has the group's batcher run its chunks, and reports.
pk::StreamUpdate feed(parakeet_stream* s, const float* pcm, int n) {
    return step(s, [&](pk::LiveStream& c) {
        if (s->group == nullptr) return c.feed(pcm, n);
        c.take_audio(pcm, n);
        pk::capi::group_batcher(s->group).run(c);
        return c.take_update();
    });
}

pk::StreamUpdate finalize(parakeet_stream* s) {
    return step(s, [&](pk::LiveStream& c) {
        if (s->group == nullptr) return c.finalize();
        c.end_audio();
        pk::capi::group_batcher(s->group).run(c);
        return c.take_update();
    });
}

// The feed/finalize document (see parakeet_capi.h); drains the event queue into "events".
std::string update_json(parakeet_stream* s, const pk::StreamUpdate& u) {
    const double frame_sec = s->stream->frame_sec();
    pk::JsonWriter j;
    j.begin_object();
    j.key("text").value(u.text);
    const int bits = event_bits(u);
    j.key("eou").value((bits & PARAKEET_EVENT_EOU) ? 1 : 0);
    j.key("eob").value((bits & PARAKEET_EVENT_EOB) ? 1 : 0);
    j.key("frame_sec").value(frame_sec, 6);
    j.key("events").begin_array();
    {
        std::lock_guard<std::mutex> lock(s->mu);
        for (const parakeet_stream_event& e : s->events) {
            j.begin_object();
            j.key("type").value(e.is_eob ? "eob" : "eou");
            j.key("frame").value(e.encoder_frame);
            j.key("t").value(static_cast<double>(e.time_sec), 3);
            j.end_object();
        }
        s->events.clear();
    }
    j.end_array();
    j.key("words");
    pk::capi::write_words(j, u.words);
    j.key("tokens");
    pk::capi::write_tokens(j, u.tokens, frame_sec);
    j.key("partial").value(u.partial);
    j.key("audio_sec").value(u.audio_sec, 3);
    j.key("final_sec").value(u.final_sec, 3);
    j.key("chunks").value(u.chunks);
    j.key("finalized").value(u.finalized);
    j.end_object();
    return j.str();
}

void check_stream(const parakeet_stream* s) {
    if (s == nullptr) throw pk::InvalidArgument("stream is NULL");
}

// Counts a call on a stream for as long as it runs (see stream_free).
class InFlight {
public:
    explicit InFlight(parakeet_stream* s) : s_(s) {
        if (s_ != nullptr) s_->calls_in_flight.fetch_add(1, std::memory_order_acq_rel);
    }
    ~InFlight() {
        if (s_ != nullptr) s_->calls_in_flight.fetch_sub(1, std::memory_order_acq_rel);
    }
    InFlight(const InFlight&) = delete;
    InFlight& operator=(const InFlight&) = delete;

private:
    parakeet_stream* s_;
};

parakeet_ctx* ctx_of(const parakeet_stream* s) { return s != nullptr ? s->ctx : nullptr; }

}  // namespace

namespace pk::capi {

int stream_calls_in_flight(const parakeet_stream* s) { return s->calls_in_flight.load(std::memory_order_acquire); }

}  // namespace pk::capi

extern "C" {

parakeet_stream* parakeet_capi_stream_begin(parakeet_ctx* ctx) {
    return guarded<parakeet_stream*>(ctx, nullptr, [&] { return begin(ctx, pk::capi::StreamOptions{}); });
}

parakeet_stream* parakeet_capi_stream_begin_lang(parakeet_ctx* ctx, const char* target_lang) {
    return guarded<parakeet_stream*>(ctx, nullptr, [&] {
        pk::capi::StreamOptions o;
        if (target_lang != nullptr) o.language = target_lang;
        return begin(ctx, o);
    });
}

parakeet_stream* parakeet_capi_stream_begin_with(parakeet_ctx* ctx, const char* options_json) {
    return guarded<parakeet_stream*>(
        ctx, nullptr, [&] { return begin(ctx, pk::capi::parse_stream_options(options_json)); });
}

char* parakeet_capi_stream_feed(parakeet_stream* s, const float* pcm, int n_samples, int* eou_out) {
    if (eou_out != nullptr) *eou_out = 0;
    const InFlight in(s);
    return guarded<char*>(ctx_of(s), nullptr, [&] {
        check_stream(s);
        const pk::StreamUpdate u = feed(s, pcm, n_samples);
        if (eou_out != nullptr) *eou_out = event_bits(u);
        return pk::capi::to_c_string(u.text);
    });
}

char* parakeet_capi_stream_finalize(parakeet_stream* s) {
    const InFlight in(s);
    return guarded<char*>(ctx_of(s), nullptr, [&] {
        check_stream(s);
        return pk::capi::to_c_string(finalize(s).text);
    });
}

char* parakeet_capi_stream_feed_json(parakeet_stream* s, const float* pcm, int n_samples) {
    const InFlight in(s);
    return guarded<char*>(ctx_of(s), nullptr, [&] {
        check_stream(s);
        return pk::capi::to_c_string(update_json(s, feed(s, pcm, n_samples)));
    });
}

char* parakeet_capi_stream_finalize_json(parakeet_stream* s) {
    const InFlight in(s);
    return guarded<char*>(ctx_of(s), nullptr, [&] {
        check_stream(s);
        return pk::capi::to_c_string(update_json(s, finalize(s)));
    });
}

int parakeet_capi_stream_drain_events(parakeet_stream* s, parakeet_stream_event** out_events) {
    if (out_events != nullptr) *out_events = nullptr;
    const InFlight in(s);
    return guarded<int>(ctx_of(s), -1, [&] {
        check_stream(s);
        if (out_events == nullptr) throw pk::InvalidArgument("out_events is NULL");
        std::lock_guard<std::mutex> lock(s->mu);
        const int n = static_cast<int>(s->events.size());
        if (n == 0) return 0;
        auto* out = static_cast<parakeet_stream_event*>(std::malloc(sizeof(parakeet_stream_event) * n));
        if (out == nullptr) throw std::bad_alloc();
        std::copy(s->events.begin(), s->events.end(), out);
        s->events.clear();
        *out_events = out;
        return n;
    });
}

void parakeet_capi_free_events(parakeet_stream_event* events) { std::free(events); }

// A stream another thread is feeding (or finalizing, or draining) is not freed: that call
// would go on in freed memory. The free is refused with an error instead, and the stream
// stays valid; free it again once that call has returned.
void parakeet_capi_stream_free(parakeet_stream* s) {
    if (s == nullptr) return;
    if (s->calls_in_flight.load(std::memory_order_acquire) != 0) {
        pk::capi::set_error(s->ctx, pk::ErrorCode::InvalidArgument,
                            "stream_free: the stream is in use by a call on another thread (a feed, finalize or "
                            "drain); free it after that call returns");
        return;
    }
    pk::capi::clear_error(nullptr);
    pk::capi::leave_group(s);
    delete s;
}

}  // extern "C"
