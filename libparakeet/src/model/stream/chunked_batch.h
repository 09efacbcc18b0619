// ChunkedBatch: the due windows of several buffered streams of one offline model run together.
// A buffered stream (ChunkedStream, NeMo's chunked inference) encodes a whole window (10-2-2 s:
// 14 s of audio) for every chunk it decodes; the windows that are due in several streams at
// once go through the encoder as one batched pass (FastConformerEncoder::forward_batch: the
// products on all windows' frames stacked), and the decodes of their chunks (and of the right
// contexts, the tentative text) run as batched greedy decodes (StreamDecoder::decode_batch).
// Each window keeps its own front end (its own mel normalisation), its own encoder length and
// attention, so every stream gets bitwise what it gets alone.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/stream/chunked_stream.h"
#include "runtime/backend.h"

namespace pk {

class ChunkedBatch {
public:
    // Throws InvalidArgument for no streams, a null or repeated stream, or streams of
    // different models.
    explicit ChunkedBatch(std::vector<ChunkedStream*> streams);

    // Runs every window the streams have due on `b` (leased, or locked, by the caller), round by
    // round: a round encodes the next window of every stream that has one, then decodes them.
    // The streams' audio comes from take_audio / end_audio before, their updates from
    // take_update after; no other thread may use them meanwhile. Returns the rounds run.
    // `max_rounds`: stop after that many.
    int64_t run(Backend& b, int64_t max_rounds = std::numeric_limits<int64_t>::max()) const;

private:
    std::vector<ChunkedStream*> streams_;
};

}  // namespace pk
