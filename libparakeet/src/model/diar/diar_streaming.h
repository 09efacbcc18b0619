// Sortformer's streaming inference on a DiarModel, as NeMo 3.0.0's forward_streaming_step
// computes one step (SortformerEncLabelModel, synchronous update, eval):
//   pre_encode on the chunk's mel window (contexts included) -> pre-encode embeddings;
//   [speaker cache, FIFO, chunk] concatenated -> the conformer layers (bypass_pre_encode: the
//   x-scaling and relative positions apply to the concatenation) -> encoder_proj, transformer,
//   head; the chunk's own frames' probabilities (lc / rc context frames dropped) are the step's
//   output, and the SpeakerCache update moves the chunk into the FIFO and the cache.
//
// diar_streaming_probabilities is forward_streaming on a whole clip: no peak scaling (NeMo
// scales only offline), the log-mel once over the whole clip (with the model's normalisation,
// so per_feature statistics are the whole clip's), then the chunks of stream_schedule.h.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_model.h"
#include "model/diar/speaker_cache.h"
#include "model/diar/streaming_params.h"

namespace pk {

class DiarStreamingRunner {
public:
    // Throws InvalidArgument for parameters NeMo rejects.
    DiarStreamingRunner(const DiarModel& model, const DiarStreamingParams& params);

    // One step on a locked backend (its arena is reset): mel [rows, n_mels], the window's valid
    // mel frames; lc / rc its context frames after the subsampling. Returns the chunk's
    // probabilities, [frames, n_speakers]. `progress` hears the conformer layers' row chunks
    // (it may throw Cancelled, before the cache is updated).
    std::vector<float> step(Backend& b, const float* mel, int64_t rows, int lc, int rc,
                            const ProgressSpan& progress = {});

    const DiarStreamingParams& params() const { return params_; }
    const SpeakerCache& cache() const { return cache_; }

private:
    const DiarModel& model_;
    DiarStreamingParams params_;
    SpeakerCache cache_;
};

// NeMo's forward_streaming on n samples at sample_rate (resampled to the model's rate first).
// Borrows a backend. `progress` hears 0 first, chunk i's conformer layers within
// [i / chunks, (i + 1) / chunks], (i + 1) / chunks after it, and 1 at the end; reports never
// change the result. Throws InvalidArgument / InvalidAudio for bad audio or parameters,
// Cancelled when `progress` says stop.
SpeakerProbabilities diar_streaming_probabilities(const DiarModel& model, const float* samples, int64_t n,
                                                  int sample_rate, const DiarStreamingParams& params,
                                                  const ProgressSpan& progress = {});

}  // namespace pk
