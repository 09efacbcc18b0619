// SasStream: live speaker-attributed ASR — a DiarStream on the audio as it arrives and the ASR
// model transcribing the windows SasCommitter chooses; each committed word takes its speaker
// from the segments known when it commits (the closed ones, and the open ones ending at the
// diarized time) by speaker_words.h's rule. A committed word ends at least 1 s before the
// diarized time (or the stream has ended), so the segments it can overlap or be near are
// already what the whole stream's diarization gives there.
//
// Two steps per feed, so that the C ABI can tell a diarization failure from a transcription
// failure: diarize(), then commit(). The models must outlive the stream; one thread at a time.
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
    void diarize(const float* samples, int64_t n, bool last);
    // The words that commit now (after diarize() with the same samples and `last`).
    SasWords commit(const float* samples, int64_t n, bool last);

    int sample_rate() const { return rate_; }

private:
    std::vector<DiarSegment> known_segments() const;

    int rate_;
    DiarStream diarizer_;
    SasCommitter committer_;
    std::vector<DiarSegment> closed_;  // closed segments that may still matter
};

}  // namespace pk
