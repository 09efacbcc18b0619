// LiveStream: what the C ABI's stream handle drives, whichever way the model streams: the
// buffered chunked inference of an offline model (ChunkedStream) or the cache-aware streaming of
// a cache-aware model (CacheAwareStream). Same contract for both: feed() takes audio and decodes
// whatever became complete, finalize() decodes the rest, and the updates' texts add up to the
// transcript's text.
//
// feed() and finalize() run the stream's chunks alone. They come in halves so that a batch can
// run the chunks of several streams of one model in between (StreamBatcher, run_stream_batch):
// take_audio() / end_audio(), then the chunks, then take_update(). Either way a stream gets
// the same bits.
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

    // Appends n samples at the model's sample rate and runs every chunk now complete.
    // Throws InvalidArgument (bad buffer, non-finite samples, after finalize).
    StreamUpdate feed(const float* samples, int64_t n);
    // Runs the rest as the last chunks; the stream then takes no more audio.
    StreamUpdate finalize();

    // feed() and finalize() without running any chunk: take_audio appends n samples (checks as
    // feed); end_audio marks the end of the audio, so that the rest becomes the last chunks and
    // the next update is the final one (throws InvalidArgument when the audio had ended already).
    virtual void take_audio(const float* samples, int64_t n) = 0;
    virtual void end_audio() = 0;
    // Whether a chunk can run now.
    virtual bool chunk_ready() const = 0;
    // What the chunks run since the last update made final (the final update once the audio
    // has ended: the stream is then finalized).
    virtual StreamUpdate take_update() = 0;

    virtual const Model& model() const = 0;
    virtual const std::vector<TranscriptToken>& tokens() const = 0;
    virtual Transcript transcript() const = 0;
    virtual double frame_sec() const = 0;
    virtual bool finalized() const = 0;
};

}  // namespace pk
