// OfflineBatch: several offline transcription requests of one model run together. A short
// upload is a few dozen encoder frames, so a request alone streams every weight of the model
// through the caches for few rows; a batch stacks the frames of all its requests for every
// product of the encoder (FastConformerEncoder::forward_batch) and of the greedy transducer
// decode (TransducerDecoder::decode_batch), and so reads the weights once for all of them.
// The front end (resampling, log-mel), the prompt and CTC decoding run per request.
//
// Every transcript is bitwise what Model::transcribe gives the request alone: each product's
// output row depends only on its input row and the kernels it takes alone, and everything
// that reads other frames runs per request on the same inputs as alone.
#pragma once

#include <cstdint>
#include <exception>
#include <vector>

#include "model/model.h"
#include "runtime/backend.h"

namespace pk {

// One request of a batch: its audio and options in, its transcript or its own error out.
struct OfflineRequest {
    const float* samples = nullptr;
    int64_t n = 0;
    int sample_rate = 0;
    const RequestOptions* options = nullptr;
    Transcript transcript;
    std::exception_ptr error;  // set instead of `transcript` when the request failed
};

class OfflineBatch {
public:
    explicit OfflineBatch(const Model& model) : model_(model) {}

    // Whether a request with these options may run in a batch: greedy decoding without
    // hotwords (beam search and hotword biasing run alone). Its progress callback, if any, is
    // not called by run(): the caller reports around it.
    static bool batchable(const RequestOptions& options) { return options.beam.beam_size <= 0 && !options.hotwords; }

    // The checks Model::transcribe makes of a request before any work (its head, its language,
    // its audio's length and rate): throws what transcribe would throw.
    void check(const OfflineRequest& r) const;

    // Transcribes the requests (batchable ones) on `b` (leased by the caller). A request whose
    // own audio or options fail gets that error and leaves the batch; an error of the batch's
    // shared work is every remaining request's error.
    void run(Backend& b, const std::vector<OfflineRequest*>& requests) const;

    // run() on a backend leased from the model's pool for the batch; when none can be had (out
    // of memory), that is every request's error.
    void run_leased(const std::vector<OfflineRequest*>& requests) const;

private:
    const Model& model_;
};

}  // namespace pk
