#include "model/stream/chunked_stream.h"

#include <optional>
#include <vector>

#include "common/errors.h"

namespace pk {

ChunkedStream::ChunkedStream(const Model& model, const StreamSettings& settings)
    : model_(model),
      ctx_(stream_context(settings, model.config().pre, model.config().enc.subsampling_factor)),
      schedule_(ctx_),
      frame_sec_(model.config().frame_seconds()),
      decoder_(model, settings.decoder) {
    if (model.config().enc.chunked_limited())
        throw InvalidArgument("this is a cache-aware streaming model: it streams with its own attention contexts "
                              "(att_context), not with left/chunk/right windows");
}

ChunkedStream::~ChunkedStream() = default;

void ChunkedStream::take_audio(const float* samples, int64_t n) {
    check_feed(samples, n, received_, ended_);
    audio_.insert(audio_.end(), samples, samples + n);
    received_ += n;
}

void ChunkedStream::end_audio() {
    if (ended_) throw InvalidArgument("the stream is already finalized");
    ended_ = true;
}

std::optional<ChunkWindow> ChunkedStream::next_window() const {
    if (finalized_) return std::nullopt;
    return schedule_.next(received_, ended_);
}

bool ChunkedStream::chunk_ready() const { return next_window().has_value(); }

StreamUpdate ChunkedStream::take_update() {
    StreamUpdate u;
    const bool final = ended_ && !finalized_;
    if (final) {
        finalized_ = true;
        std::vector<float>().swap(audio_);
        audio_start_ = received_;
    } else {
        // Drop what no later window reads, once that is more than a window (amortised O(1)).
        const int64_t drop = schedule_.keep_from(received_) - audio_start_;
        if (drop > ctx_.window()) {
            audio_.erase(audio_.begin(), audio_.begin() + drop);
            audio_start_ += drop;
        }
    }
    decoder_.fill_update(final, schedule_.chunks_run() != chunks_reported_, u);
    chunks_reported_ = schedule_.chunks_run();
    u.chunks = schedule_.chunks_run();
    const double rate = model_.config().pre.sample_rate;
    u.audio_sec = static_cast<double>(received_) / rate;
    u.final_sec = final ? u.audio_sec : static_cast<double>(decoder_.decoded_frames()) * frame_sec_;
    u.finalized = finalized_;
    return u;
}

Transcript ChunkedStream::transcript() const {
    Transcript t = decoder_.transcript();
    t.attention = model_.resolve_attention({}, ctx_.window() / ctx_.frame_samples);  // of a whole window
    return t;
}

}  // namespace pk
