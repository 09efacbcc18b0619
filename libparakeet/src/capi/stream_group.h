// parakeet_stream_group, the C ABI's stream group: a pk::StreamBatcher for one context and the
// streams that joined it. A member's feeds and finalize run its chunks through the batcher
// (capi/stream_calls.cpp). A group is freed only without members, so a member's `group` is
// always valid; locks are taken stream first, then group.
#pragma once

#include <memory>
#include <mutex>
#include <set>

#include "model/stream/stream_batcher.h"
#include "parakeet_capi.h"

struct parakeet_stream_group {
    parakeet_ctx* ctx = nullptr;
    std::unique_ptr<pk::StreamBatcher> batcher;
    std::mutex mu;                        // guards members
    std::set<parakeet_stream*> members;
};

namespace pk::capi {

StreamBatcher& group_batcher(parakeet_stream_group* g);
// Takes s out of its group, if it is in one (stream_free). Takes s->mu.
void leave_group(parakeet_stream* s);

}  // namespace pk::capi
