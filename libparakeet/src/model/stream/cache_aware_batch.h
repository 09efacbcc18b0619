// CacheAwareBatch: the ready chunks of several cache-aware streams of one model run as
// batched steps. Live streams are memory bound: one chunk of a 160 ms stream is two encoder
// frames, so a step alone streams every weight of the model through the caches for two rows.
// A batched step stacks the rows of all the streams' chunks for every product of the encoder
// (FastConformerEncoder::stream_steps) and so reads the weights once for all of them; each
// stream still attends over its own cache, convolves over its own conv cache and decodes with
// its own decoder state. The greedy transducer decodes of a round's streams run batched too
// (StreamDecoder::decode_batch): their prediction-net and joint steps are stacked likewise.
//
// Every result is bitwise what the stream gives alone: each product's output row depends only
// on its input row (tests/cpp/test_kernel_matmul_rows.cpp), and everything that reads other
// frames runs per stream on the same inputs as alone.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "model/stream/cache_aware_stream.h"
#include "runtime/backend.h"

namespace pk {

class CacheAwareBatch {
public:
    // Throws InvalidArgument for no streams, a null or repeated stream, or streams of
    // different models.
    explicit CacheAwareBatch(std::vector<CacheAwareStream*> streams);

    // Runs every chunk the streams have ready on `b` (leased, or locked, by the caller), round
    // by round: a round is one batched encoder step over the next chunk of every stream that has
    // one, then those streams' batched decoding. The streams' audio comes from take_audio /
    // end_audio before, their updates from take_update after; no other thread may use them
    // meanwhile. Returns the rounds run. `max_rounds`: stop after that many (StreamBatcher
    // runs one, so that a stream with many chunks ready holds its batch-mates for no more).
    int64_t run(Backend& b, int64_t max_rounds = std::numeric_limits<int64_t>::max()) const;

private:
    std::vector<CacheAwareStream*> streams_;
};

}  // namespace pk
