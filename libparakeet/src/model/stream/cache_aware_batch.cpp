#include "model/stream/cache_aware_batch.h"

#include <algorithm>
#include <utility>

#include "model/stream/stream_batch.h"

namespace pk {

CacheAwareBatch::CacheAwareBatch(std::vector<CacheAwareStream*> streams) : streams_(std::move(streams)) {
    check_batch_members({streams_.begin(), streams_.end()});
}

int64_t CacheAwareBatch::run(Backend& b, int64_t max_rounds) const {
    const FastConformerEncoder& enc = streams_[0]->model().encoder();
    Arena& arena = b.arena();
    int64_t rounds = 0;
    std::vector<EncoderStep> steps;
    std::vector<CacheAwareStream*> ready;
    std::vector<StreamDecoder*> decoders;
    std::vector<const float*> encs;
    std::vector<int64_t> frames;
    for (; rounds < max_rounds; ++rounds) {
        arena.reset();
        steps.clear();
        ready.clear();
        int64_t rows = 0;
        for (CacheAwareStream* s : streams_) {
            EncoderStep step;
            if (!s->prepare_step(b, step)) continue;
            rows += enc.output_frames(step.mel_frames);
            steps.push_back(step);
            ready.push_back(s);
        }
        if (steps.empty()) break;
        float* out = arena.alloc_array<float>(static_cast<size_t>(std::max<int64_t>(1, rows) * enc.d_model()));
        enc.stream_steps(b.team(), arena, steps, out);
        decoders.clear();
        encs.clear();
        frames.clear();
        for (size_t i = 0; i < ready.size(); ++i) {
            float* rows_i = out + steps[i].row * enc.d_model();
            ready[i]->prompt_step(b, rows_i, steps[i].frames);
            decoders.push_back(&ready[i]->decoder_);
            encs.push_back(rows_i);
            frames.push_back(steps[i].frames);
        }
        StreamDecoder::decode_batch(b, decoders, encs, frames);
        for (CacheAwareStream* s : ready) s->finish_step();
    }
    arena.release_if_above(kArenaKeepBytes);
    return rounds;
}

}  // namespace pk
