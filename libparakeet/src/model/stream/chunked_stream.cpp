#include "model/stream/chunked_stream.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

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

StreamUpdate ChunkedStream::feed(const float* samples, int64_t n) {
    check_feed(samples, n, received_, finalized_);
    audio_.insert(audio_.end(), samples, samples + n);
    received_ += n;
    return run_ready(false);
}

StreamUpdate ChunkedStream::finalize() {
    if (finalized_) throw InvalidArgument("the stream is already finalized");
    return run_ready(true);
}

StreamUpdate ChunkedStream::run_ready(bool final) {
    const int64_t chunks_before = schedule_.chunks_run();
    while (const auto w = schedule_.next(received_, final)) {
        run_chunk(*w);
        schedule_.advance(*w);
    }
    StreamUpdate u;
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
    decoder_.fill_update(final, schedule_.chunks_run() != chunks_before, u);
    u.chunks = schedule_.chunks_run();
    const double rate = model_.config().pre.sample_rate;
    u.audio_sec = static_cast<double>(received_) / rate;
    u.final_sec = final ? u.audio_sec : static_cast<double>(decoder_.decoded_frames()) * frame_sec_;
    u.finalized = finalized_;
    return u;
}

void ChunkedStream::run_chunk(const ChunkWindow& w) {
    const BackendLease lease = model_.lease_backend();
    Backend& b = lease.backend();
    b.arena().reset();
    const float* audio = audio_.data() + (w.window_start - audio_start_);
    const MelFeatures mel = model_.compute_mel(b, audio, w.window_end - w.window_start);
    const int64_t frames = model_.encoder().output_frames(mel.valid);
    const EncoderOutput enc = model_.encode(b, mel, {}, model_.resolve_attention({}, frames));
    const int64_t d_model = model_.config().enc.d_model;

    const int64_t left = std::min(w.left_frames, enc.frames);
    const int64_t n_decode = w.last ? enc.frames - left : std::min(w.decode_frames, enc.frames - left);
    const float* chunk = enc.frames > 0 ? enc.data + left * d_model : nullptr;
    decoder_.decode(b, chunk, n_decode);

    // The right context, decoded from a copy of the state: the tentative text after the final.
    const int64_t n_right = enc.frames - left - n_decode;
    if (!w.last && n_right > 0) decoder_.decode_tentative(b, chunk + n_decode * d_model, n_right);
    else decoder_.clear_tentative();
    b.arena().release_if_above(kArenaKeepBytes);
}

Transcript ChunkedStream::transcript() const {
    Transcript t = decoder_.transcript();
    t.attention = model_.resolve_attention({}, ctx_.window() / ctx_.frame_samples);  // of a whole window
    return t;
}

}  // namespace pk
