#include "model/stream/stream_batch.h"

#include <algorithm>

#include "common/errors.h"
#include "model/stream/cache_aware_batch.h"
#include "model/stream/chunked_batch.h"

namespace pk {
namespace {

// The streams as `Stream`s, run by a `Batch` (whose constructor checks the rest).
template <class Stream, class Batch>
int64_t run_as(const std::vector<LiveStream*>& streams, Backend& b, int64_t max_rounds) {
    std::vector<Stream*> typed;
    typed.reserve(streams.size());
    for (LiveStream* s : streams) {
        auto* t = dynamic_cast<Stream*>(s);
        if (s != nullptr && t == nullptr)
            throw InvalidArgument("the streams of a batch must all stream one way (cache-aware or buffered)");
        typed.push_back(t);
    }
    return Batch(std::move(typed)).run(b, max_rounds);
}

}  // namespace

void check_batch_members(const std::vector<const LiveStream*>& streams) {
    if (streams.empty()) throw InvalidArgument("a stream batch needs at least one stream");
    for (size_t i = 0; i < streams.size(); ++i) {
        if (streams[i] == nullptr) throw InvalidArgument("a stream batch was given a null stream");
        if (&streams[i]->model() != &streams[0]->model())
            throw InvalidArgument("the streams of a batch must all be of one model");
        const auto before = streams.begin() + static_cast<std::ptrdiff_t>(i);
        if (std::find(streams.begin(), before, streams[i]) != before)
            throw InvalidArgument("a stream batch was given the same stream twice");
    }
}

int64_t run_stream_batch(const std::vector<LiveStream*>& streams, Backend& b, int64_t max_rounds) {
    if (streams.empty()) throw InvalidArgument("a stream batch needs at least one stream");
    if (dynamic_cast<CacheAwareStream*>(streams.front()) != nullptr)
        return run_as<CacheAwareStream, CacheAwareBatch>(streams, b, max_rounds);
    return run_as<ChunkedStream, ChunkedBatch>(streams, b, max_rounds);
}

}  // namespace pk
