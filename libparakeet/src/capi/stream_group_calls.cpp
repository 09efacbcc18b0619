// The stream group entry points of the C ABI (the handle: capi/stream_group.h).
#include <mutex>
#include <string>

#include "capi/batch_stats_json.h"
#include "capi/context.h"
#include "capi/stream_group.h"
#include "capi/stream_handle.h"
#include "common/errors.h"
#include "common/json_writer.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

void check_group(const parakeet_stream_group* g) {
    if (g == nullptr) throw pk::InvalidArgument("stream group is NULL");
}

void check_stream(const parakeet_stream* s) {
    if (s == nullptr) throw pk::InvalidArgument("stream is NULL");
}

parakeet_ctx* ctx_of(const parakeet_stream_group* g) { return g != nullptr ? g->ctx : nullptr; }

// Takes s out of g; s->mu is held.
void remove_member(parakeet_stream_group* g, parakeet_stream* s) {
    std::lock_guard<std::mutex> lock(g->mu);
    g->members.erase(s);
    g->batcher->leave();
    s->group = nullptr;
}

}  // namespace

namespace pk::capi {

StreamBatcher& group_batcher(parakeet_stream_group* g) { return *g->batcher; }

void leave_group(parakeet_stream* s) {
    std::lock_guard<std::mutex> lock(s->mu);
    if (s->group != nullptr) remove_member(s->group, s);
}

}  // namespace pk::capi

extern "C" {

parakeet_stream_group* parakeet_capi_stream_group_new(parakeet_ctx* ctx, int max_batch, int max_wait_ms) {
    return guarded<parakeet_stream_group*>(ctx, nullptr, [&] {
        const pk::Model& model = pk::capi::asr_model(ctx);
        auto g = std::make_unique<parakeet_stream_group>();
        g->ctx = ctx;
        g->batcher = std::make_unique<pk::StreamBatcher>(model, max_batch, max_wait_ms);
        return g.release();
    });
}

int parakeet_capi_stream_group_join(parakeet_stream_group* g, parakeet_stream* s) {
    return guarded<int>(ctx_of(g), 1, [&] {
        check_group(g);
        check_stream(s);
        std::lock_guard<std::mutex> stream_lock(s->mu);
        if (s->group == g) throw pk::InvalidArgument("stream_group_join: the stream is in this group already");
        if (s->group != nullptr) throw pk::InvalidArgument("stream_group_join: the stream is in another group");
        if (s->stream->finalized()) throw pk::InvalidArgument("stream_group_join: the stream is finalized");
        std::lock_guard<std::mutex> lock(g->mu);
        g->batcher->join(*s->stream);
        g->members.insert(s);
        s->group = g;
        return 0;
    });
}

int parakeet_capi_stream_group_leave(parakeet_stream_group* g, parakeet_stream* s) {
    return guarded<int>(ctx_of(g), 1, [&] {
        check_group(g);
        check_stream(s);
        std::lock_guard<std::mutex> stream_lock(s->mu);
        if (s->group != g) throw pk::InvalidArgument("stream_group_leave: the stream is not in this group");
        remove_member(g, s);
        return 0;
    });
}

int parakeet_capi_stream_group_size(parakeet_stream_group* g) {
    return guarded<int>(ctx_of(g), -1, [&] {
        check_group(g);
        std::lock_guard<std::mutex> lock(g->mu);
        return static_cast<int>(g->members.size());
    });
}

char* parakeet_capi_stream_group_stats_json(parakeet_stream_group* g) {
    return guarded<char*>(ctx_of(g), nullptr, [&] {
        check_group(g);
        const pk::StreamBatcher::Stats st = g->batcher->stats();
        pk::JsonWriter j;
        j.begin_object();
        j.key("max_batch").value(g->batcher->max_batch());
        j.key("max_wait_ms").value(g->batcher->max_wait_ms());
        j.key("members").value(g->batcher->members());
        pk::capi::write_batch_stats(j, st.batch_sizes, st.waited_ms_max, st.waited_ms_total);
        j.end_object();
        return pk::capi::to_c_string(j.str());
    });
}

// A group with members is not freed (their feeds would go on in freed memory): the free is
// refused with an error and the group stays valid.
void parakeet_capi_stream_group_free(parakeet_stream_group* g) {
    if (g == nullptr) return;
    size_t members = 0;
    {
        std::lock_guard<std::mutex> lock(g->mu);
        members = g->members.size();
    }
    if (members != 0) {
        pk::capi::set_error(g->ctx, pk::ErrorCode::InvalidArgument,
                            "stream_group_free: " + std::to_string(members) +
                                " stream(s) are still in the group; leave or free them first");
        return;
    }
    pk::capi::clear_error(nullptr);
    delete g;
}

}  // extern "C"
