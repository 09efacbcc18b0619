#include "model/diar/diarize_checkpoint.h"

#include "model/diar/diar_streaming.h"

namespace pk {

SpeakerProbabilities diarize_probabilities(const DiarModel& model, const float* samples, int64_t n, int sample_rate,
                                           const ProgressSpan& progress) {
    if (model.config().streaming_mode)
        return diar_streaming_probabilities(model, samples, n, sample_rate, model.config().streaming, progress);
    return model.probabilities(samples, n, sample_rate, progress);
}

}  // namespace pk
