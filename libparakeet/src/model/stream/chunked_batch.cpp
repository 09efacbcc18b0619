#include "model/stream/chunked_batch.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "model/stream/stream_batch.h"

namespace pk {
namespace {

// One stream's window in a round, and where its encoder output is.
struct DueWindow {
    ChunkedStream* stream;
    ChunkWindow window;
    const float* enc = nullptr;  // [frames, d_model]
    int64_t frames = 0;
};

// A window's encoder frames: `left` of left context, then `decoded` the chunk decodes for good,
// then `right` of right context, decoded from a copy of the state as the tentative text (none
// for the last chunk, which decodes everything after its left context).
struct WindowFrames {
    int64_t left, decoded, right;
};

WindowFrames split(const ChunkWindow& w, int64_t frames) {
    const int64_t left = std::min(w.left_frames, frames);
    const int64_t decoded = w.last ? frames - left : std::min(w.decode_frames, frames - left);
    return {left, decoded, w.last ? 0 : frames - left - decoded};
}

}  // namespace

ChunkedBatch::ChunkedBatch(std::vector<ChunkedStream*> streams) : streams_(std::move(streams)) {
    check_batch_members({streams_.begin(), streams_.end()});
}

int64_t ChunkedBatch::run(Backend& b, int64_t max_rounds) const {
    const Model& model = streams_[0]->model();
    const int64_t d_model = model.config().enc.d_model;
    int64_t rounds = 0;
    std::vector<DueWindow> due;
    std::vector<EncoderUtterance> utterances;
    std::vector<StreamDecoder*> decoders, tentative;
    std::vector<const float*> encs, right_encs;
    std::vector<int64_t> frames, right_frames;
    for (; rounds < max_rounds; ++rounds) {
        b.arena().reset();
        due.clear();
        utterances.clear();
        int64_t rows = 0;
        for (ChunkedStream* s : streams_) {
            const std::optional<ChunkWindow> w = s->next_window();
            if (!w) continue;
            // Each window is its own utterance: its own mel normalisation, its own length and
            // the attention the model gives that length.
            const MelFeatures mel = model.compute_mel(b, s->window_audio(*w), w->window_end - w->window_start);
            const int64_t frames = model.encoder().output_frames(mel.valid);
            utterances.push_back({mel.data, mel.valid, model.resolve_attention({}, frames)});
            rows += std::max<int64_t>(0, frames);
            due.push_back({s, *w});
        }
        if (due.empty()) break;
        float* out = b.arena().alloc_array<float>(static_cast<size_t>(std::max<int64_t>(1, rows) * d_model));
        model.encoder().forward_batch(b.team(), b.arena(), utterances, out);
        for (size_t i = 0; i < due.size(); ++i) {
            due[i].frames = utterances[i].frames;
            due[i].enc = out + utterances[i].row * d_model;
        }

        decoders.clear();
        encs.clear();
        frames.clear();
        tentative.clear();
        right_encs.clear();
        right_frames.clear();
        for (const DueWindow& d : due) {
            const WindowFrames f = split(d.window, d.frames);
            const float* chunk = d.frames > 0 ? d.enc + f.left * d_model : nullptr;
            decoders.push_back(&d.stream->decoder_);
            encs.push_back(chunk);
            frames.push_back(f.decoded);
            if (f.right > 0) {
                tentative.push_back(&d.stream->decoder_);
                right_encs.push_back(chunk + f.decoded * d_model);
                right_frames.push_back(f.right);
            } else {
                d.stream->decoder_.clear_tentative();
            }
        }
        StreamDecoder::decode_batch(b, decoders, encs, frames);
        StreamDecoder::decode_tentative_batch(b, tentative, right_encs, right_frames);
        for (const DueWindow& d : due) d.stream->finish_window(d.window);
    }
    b.arena().release_if_above(kArenaKeepBytes);
    return rounds;
}

}  // namespace pk
