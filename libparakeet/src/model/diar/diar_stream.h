// DiarStream: live diarization of audio that arrives in pieces, at the model's sample rate.
//
// What it computes: exactly diar_streaming_probabilities (NeMo's forward_streaming) on the
// audio received, for models without mel normalisation (NeMo's normalize "NA", as the released
// streaming Sortformer checkpoints): such a mel frame depends only on its own samples, so each
// frame is computed once its window is complete and equals the whole-clip frame; chunk i runs
// as soon as its full window (chunk plus right context) exists, and at the end the remaining
// chunks run with the windows the whole clip gives them. The probabilities, and so the
// segments, are therefore the same for any way of cutting the audio into feeds, and equal to
// the one-shot streaming path's. A model that normalises per_feature uses whole-clip
// statistics that a causal stream cannot know: such a model is refused (Unsupported).
//
// Segments: NeMo's binarisation at the model's onset / offset thresholds (DiarSegmentTracker);
// feed hands out the segments that closed, active() the open ones.
//
// A stream holds no backend between calls (each call that computes leases one), one thread at
// a time per stream, and the model must outlive it.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_model.h"
#include "model/diar/diar_streaming.h"
#include "model/diar/segment_tracker.h"

namespace pk {

class DiarStream {
public:
    DiarStream(const DiarModel& model, const DiarStreamingParams& params);

    // Appends n samples (model rate) and runs every chunk now complete; with `last`, runs the
    // rest and closes the open segments. Returns the segments that closed, by start then
    // speaker. Throws
    // InvalidArgument (bad buffer, after the last feed) or InvalidAudio (non-finite samples).
    std::vector<DiarSegment> feed(const float* samples, int64_t n, bool last);

    std::vector<DiarSegment> active() const { return tracker_.active(); }
    // Seconds diarized: the frames whose probabilities are known.
    double time() const { return static_cast<double>(tracker_.frames()) * model_.config().frame_sec; }
    // Samples a chunk needs before it runs: (chunk_len + chunk_right_context) frames.
    int64_t chunk_samples() const;
    bool finished() const { return finished_; }
    const DiarStreamingParams& params() const { return runner_.params(); }

private:
    // Makes the mel frames [mel_end_, end) (only frames the received audio determines).
    void extend_mel(Backend& b, int64_t end);

    const DiarModel& model_;
    DiarStreamingRunner runner_;
    DiarSegmentTracker tracker_;
    int n_mels_ = 0, subsampling_ = 8;

    std::vector<float> audio_;  // samples [audio_start_, received_)
    int64_t audio_start_ = 0, received_ = 0;
    std::vector<float> mel_;    // frames [mel_start_, mel_end_), time-major
    int64_t mel_start_ = 0, mel_end_ = 0;
    int64_t chunks_ = 0;        // chunks run
    bool finished_ = false;
};

// The stream's open segments, each ending at the time diarized so far (what is known of them).
std::vector<DiarSegment> open_diar_segments(const DiarStream& s);

}  // namespace pk
