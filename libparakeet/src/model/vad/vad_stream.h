// A VAD stream: audio arrives in feeds of any length; each whole chunk gives a probability,
// and speech start/end events come out as soon as they are final, with the times the one-shot
// segments have (the last partial chunk is zero-padded at is_last, as Silero's audio_forward).
// The probabilities do not depend on how the audio is cut into feeds.
//
// One stream is used by one thread at a time; many streams share one SileroVad.
#pragma once

#include <cstdint>
#include <vector>

#include "model/vad/silero_model.h"
#include "model/vad/speech_segmenter.h"
#include "runtime/thread_team.h"

namespace pk {

struct VadEvent {
    bool start = true;   // start or end of speech
    int64_t sample = 0;  // at the model rate
};

struct VadFeedResult {
    int64_t first_frame = 0;          // index of probabilities[0]
    std::vector<float> probabilities;  // one per chunk completed by this feed
    std::vector<VadEvent> events;
};

class VadStream {
public:
    // sample_rate must be 16000 or 8000 (throws InvalidAudio otherwise); options in speech mode.
    VadStream(const SileroVad& model, int sample_rate, const VadOptions& options);

    int sample_rate() const { return branch_->sample_rate; }
    int chunk() const { return branch_->chunk; }
    bool finished() const { return finished_; }

    // Throws InvalidArgument after is_last (reset() first) or for non-finite samples. With a
    // `team`, the chunks' features (SileroVad::features: STFT and encoder, which need no state)
    // are computed on its threads first and the LSTM then runs through them in order: the
    // same probabilities, bit for bit, in less time for a long feed.
    VadFeedResult feed(const float* pcm, int64_t n, bool is_last, ThreadTeam* team = nullptr);
    void reset();

    // The segmenter, for one-shot callers that fed everything with is_last.
    const SpeechSegmenter& segmenter() const { return seg_; }
    int64_t samples_fed() const { return fed_; }

private:
    void emit(VadFeedResult& out, bool at_end);

    const SileroVad& model_;
    const SileroBranch* branch_;
    SegmenterParams params_;
    SileroState state_;
    SpeechSegmenter seg_;
    std::vector<float> pending_;  // fewer than chunk samples
    int64_t fed_ = 0;
    bool finished_ = false;
    size_t starts_sent_ = 0, ends_sent_ = 0;
};

}  // namespace pk
