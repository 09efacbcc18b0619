// run_stream_batch: the ready chunks of several live streams of one model, run together the way
// their model streams (the model decides the kind, so a batch holds one kind): the steps of
// cache-aware streams as a CacheAwareBatch, the windows of buffered streams as a ChunkedBatch.
// StreamBatcher schedules these batches; a stream's own feed() runs a batch of itself.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/stream/live_stream.h"
#include "runtime/backend.h"

namespace pk {

// Runs the streams' ready chunks on `b` (leased, or locked, by the caller), at most
// `max_rounds` rounds (a round: the next chunk of every stream that has one). Returns the
// rounds run. Throws InvalidArgument for no streams, a null or repeated stream, streams of
// different models or of different kinds.
// The checks every batch makes of its streams (those above but the kinds).
void check_batch_members(const std::vector<const LiveStream*>& streams);

int64_t run_stream_batch(const std::vector<LiveStream*>& streams, Backend& b,
                         int64_t max_rounds = std::numeric_limits<int64_t>::max());

}  // namespace pk
