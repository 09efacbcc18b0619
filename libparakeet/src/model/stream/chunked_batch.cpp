#include "model/stream/chunked_batch.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "model/stream/stream_batch.h"

namespace pk {
namespace {

// One stream's window in a round: the window, its mel features and its encoder output.
struct DueWindow {
    ChunkedStream* stream;
    ChunkWindow window;
    MelFeatures mel;
    EncoderOutput enc;
};

}  // namespace

ChunkedBatch::ChunkedBatch(std::vector<ChunkedStream*> streams) : streams_(std::move(streams)) {
    check_batch_members({streams_.begin(), streams_.end()});
}

int64_t ChunkedBatch::run(Backend& b, int64_t max_rounds) const {
    const Model& model = streams_[0]->model();
    const int64_t d_model = model.config().enc.d_model;
    int64_t rounds = 0;
    std::vector<DueWindow> due;
    std::vector<StreamDecoder*> decoders, tentative;
    std::vector<const float*> encs, right_encs;
    std::vector<int64_t> frames, right_frames;
    for (; rounds < max_rounds; ++rounds) {
        b.arena().reset();
        due.clear();
        for (ChunkedStream* s : streams_) {
            const std::optional<ChunkWindow> w = s->next_window();
            if (!w) continue;
            // Each window is its own utterance to the front end: its own mel normalisation.
            const MelFeatures mel = model.compute_mel(b, s->window_audio(*w), w->window_end - w->window_start);
            due.push_back({s, *w, mel, {}});
        }
        if (due.empty()) break;
        for (DueWindow& d : due) {
            const int64_t n = model.encoder().output_frames(d.mel.valid);
            d.enc = model.encode(b, d.mel, {}, model.resolve_attention({}, n));
        }

        // The chunk's frames after the left context are final; the right context's are
        // decoded from a copy of the state, as the tentative text.
        decoders.clear();
        encs.clear();
        frames.clear();
        tentative.clear();
        right_encs.clear();
        right_frames.clear();
        for (const DueWindow& d : due) {
            const ChunkWindow& w = d.window;
            const int64_t left = std::min(w.left_frames, d.enc.frames);
            const int64_t n_decode = w.last ? d.enc.frames - left : std::min(w.decode_frames, d.enc.frames - left);
            const float* chunk = d.enc.frames > 0 ? d.enc.data + left * d_model : nullptr;
            decoders.push_back(&d.stream->decoder_);
            encs.push_back(chunk);
            frames.push_back(n_decode);
            const int64_t n_right = d.enc.frames - left - n_decode;
            if (!w.last && n_right > 0) {
                tentative.push_back(&d.stream->decoder_);
                right_encs.push_back(chunk + n_decode * d_model);
                right_frames.push_back(n_right);
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
