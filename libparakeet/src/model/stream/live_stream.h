// LiveStream: what the C ABI's stream handle drives, whichever way the model streams: the
// buffered chunked inference of an offline model (ChunkedStream) or the cache-aware streaming of
// a cache-aware model (CacheAwareStream). Same contract for both: feed() takes audio and decodes
// whatever became complete, finalize() decodes the rest, and the updates' texts add up to the
// transcript's text.
#pragma once

#include <cstdint>
#include <vector>

#include "model/stream/stream_decoder.h"

namespace pk {

// The checks every feed() makes: not after finalize, a count >= 0, a buffer when n > 0, finite
// samples (named by their index in the stream, `received` being the samples fed before).
// Throws InvalidArgument / InvalidAudio.
void check_feed(const float* samples, int64_t n, int64_t received, bool finalized);

class LiveStream {
public:
    virtual ~LiveStream() = default;
    virtual StreamUpdate feed(const float* samples, int64_t n) = 0;
    virtual StreamUpdate finalize() = 0;
    virtual const std::vector<TranscriptToken>& tokens() const = 0;
    virtual Transcript transcript() const = 0;
    virtual double frame_sec() const = 0;
    virtual bool finalized() const = 0;
};

}  // namespace pk
