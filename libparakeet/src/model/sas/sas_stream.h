// SasStream: live speaker-attributed ASR — a DiarStream on the audio as it arrives and the ASR
// model transcribing the windows SasCommitter chooses; each committed word takes its speaker
// from the segments known when it commits (the closed ones, and the open ones ending at the
// diarized time) by speaker_words.h's rule. A committed word ends at least 1 s before the
// diarized time (or the stream has ended), so the segments it can overlap or be near are
// already what the whole stream's diarization gives there.
//
// Two steps per feed, so that the C ABI can tell a diarization failure from a transcription
// failure: diarize(), then commit(). The commit rule is checked once per commit(), against the
// time diarized by then; feeds of at most step_samples() see every diarization chunk's end, so
// which words commit does not depend on how the audio is cut (the C ABI feeds it so). The models must outlive the stream; one thread at a time.
#pragma once

#include <cstdint>
#include <vector>

#include "model/diar/diar_stream.h"
#include "model/model.h"
#include "model/sas/sas_committer.h"
#include "model/sas/speaker_words.h"

namespace pk {

struct SasWords {
    std::vector<TranscriptWord> words;
    std::vector<int> speakers;  // one per word
};

class SasStream {
public:
    // Throws what DiarStream's constructor throws (a per_feature model is Unsupported).
    SasStream(const Model& asr, const DiarModel& diar, const DiarStreamingParams& params);

    // Feeds n samples at the diarization model's rate to the diarizer; `last` closes it.
    // Returns the segments that closed.
    std::vector<DiarSegment> diarize(const float* samples, int64_t n, bool last);
    // The words that commit now (after diarize() with the same samples and `last`).
    SasWords commit(const float* samples, int64_t n, bool last);

    // The open segments, each ending at the time diarized so far.
    std::vector<DiarSegment> open_segments() const { return open_diar_segments(diarizer_); }

    double diarized_sec() const { return diarizer_.time(); }
    int sample_rate() const { return rate_; }
    // Samples of one diarizer output frame: the diarized time advances by whole chunks of them.
    int64_t step_samples() const { return step_; }

private:
    int rate_;
    int64_t step_;
    DiarStream diarizer_;
    SasCommitter committer_;
    std::vector<DiarSegment> closed_;  // closed segments that may still matter
};

}  // namespace pk
