#include "model/diar/diar_stream.h"

#include <algorithm>
#include <cmath>

#include "common/errors.h"
#include "model/diar/stream_schedule.h"

namespace pk {

DiarStream::DiarStream(const DiarModel& model, const DiarStreamingParams& params)
    : model_(model),
      runner_(model, params),
      tracker_(model.config().n_speakers, model.config().upsample_factor, model.config().onset,
               model.config().offset),
      n_mels_(model.config().pre.n_mels),
      subsampling_(model.config().enc.subsampling_factor) {
    if (model.log_mel().config().normalize_per_feature)
        throw Unsupported(
            "this diarization model normalises its mel features over the whole clip (per_feature), which a live "
            "stream cannot compute; diarize the whole clip instead");
}

int64_t DiarStream::chunk_samples() const {
    const DiarStreamingParams& p = runner_.params();
    return static_cast<int64_t>(p.chunk_len + p.chunk_right_context) * subsampling_ *
           model_.log_mel().config().hop_length;
}

void DiarStream::extend_mel(Backend& b, int64_t end) {
    if (end <= mel_end_) return;
    mel_.resize(static_cast<size_t>((end - mel_start_) * n_mels_));
    model_.log_mel().compute_frames(b.team(), audio_.data(), audio_start_, received_, mel_end_, end,
                                    mel_.data() + (mel_end_ - mel_start_) * n_mels_);
    mel_end_ = end;
}

std::vector<DiarSegment> DiarStream::feed(const float* samples, int64_t n, bool last) {
    if (finished_) throw InvalidArgument("stream already finished");
    if (n < 0 || (n > 0 && samples == nullptr)) throw InvalidArgument("invalid samples buffer");
    for (int64_t i = 0; i < n; ++i)
        if (!std::isfinite(samples[i])) throw InvalidAudio("sample " + std::to_string(i) + " is not finite");
    audio_.insert(audio_.end(), samples, samples + n);
    received_ += n;

    const LogMel& mel = model_.log_mel();
    const DiarStreamingParams& p = runner_.params();
    // Before the end a chunk runs once its full window is there (then the whole clip gives it
    // that window too); at the end the clip's length fixes the remaining windows.
    const int64_t feat_len = mel.valid_frames(received_);
    const auto ready = [&](int64_t i) {
        if (last) return i < diar_chunk_count(p, subsampling_, feat_len);
        const int64_t end = diar_full_window_end(p, subsampling_, i);
        return end <= feat_len && mel.frame_ready(end - 1, received_);
    };
    std::vector<DiarSegment> closed;
    if (ready(chunks_)) {
        const BackendLease lease = model_.lease_backend();
        Backend& b = lease.backend();
        do {
            const DiarChunkWindow w =
                diar_chunk_window(p, subsampling_, chunks_, last ? feat_len : diar_full_window_end(p, subsampling_, chunks_));
            extend_mel(b, w.end);
            const std::vector<float> probs =
                runner_.step(b, mel_.data() + (w.begin - mel_start_) * n_mels_, w.end - w.begin, w.lc, w.rc);
            tracker_.push(probs.data(), static_cast<int64_t>(probs.size()) / model_.config().n_speakers, closed);
            ++chunks_;
            // The next window starts chunk_left_context frames before its chunk.
            const int64_t keep = std::max<int64_t>(0, w.chunk_end - static_cast<int64_t>(subsampling_) * p.chunk_left_context);
            if (keep > mel_start_) {
                mel_.erase(mel_.begin(), mel_.begin() + (std::min(keep, mel_end_) - mel_start_) * n_mels_);
                mel_start_ = std::min(keep, mel_end_);
            }
        } while (ready(chunks_));
        b.arena().release_if_above(kArenaKeepBytes);
    }
    // Samples no later mel frame reads.
    const int64_t keep = std::min(mel.first_sample_needed(mel_end_), received_);
    if (keep > audio_start_) {
        audio_.erase(audio_.begin(), audio_.begin() + (keep - audio_start_));
        audio_start_ = keep;
    }
    if (last) {
        tracker_.finish(closed);
        finished_ = true;
        std::vector<float>().swap(audio_);
        std::vector<float>().swap(mel_);
    }
    // Several chunks (and the end) may have closed segments: one list by start, then speaker.
    std::sort(closed.begin(), closed.end(), [](const DiarSegment& a, const DiarSegment& b) {
        return a.start != b.start ? a.start < b.start : a.speaker < b.speaker;
    });
    return closed;
}

std::vector<DiarSegment> open_diar_segments(const DiarStream& s) {
    std::vector<DiarSegment> open = s.active();
    for (DiarSegment& g : open) g.end = s.time();
    return open;
}

}  // namespace pk
