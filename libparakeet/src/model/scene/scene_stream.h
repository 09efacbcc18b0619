// SceneStream: one live feed of who said what, by name, and what else is heard (parakeet.cpp's
// scene stream, ABI 8/9). Any of four parts, each optional:
//   - diarization: a DiarStream on the audio;
//   - speaker: names for the diarized slots (live_slot_names.h), from the closed and open
//     segments; needs the diarization;
//   - ASR: SasCommitter's windows; with diarization it commits up to the diarized time and only
//     when that advanced (or at the end), each word taking its speaker by speaker_words.h's rule
//     and its slot's name at commit time; alone it commits up to the audio received, checked
//     once per second of audio;
//   - sound: a SoundStream on the audio.
// They run in that order on each piece of audio. Pieces end on whole steps of the stream's
// timeline (a diarizer frame, or a second without diarization), so what commits and when a slot
// is named do not depend on how the caller cuts the audio into feeds.
//
// A failing part's exception leaves the stream; failed_part() says which part threw. After a
// failure the stream must be ended (the parts' times may disagree). The models must outlive the
// stream; one thread at a time.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include "model/diar/diar_stream.h"
#include "model/model.h"
#include "model/sas/sas_committer.h"
#include "model/sas/sas_stream.h"
#include "model/sound/sound_stream.h"
#include "model/speaker/live_slot_names.h"

namespace pk {

struct SceneParts {
    const Model* asr = nullptr;
    const DiarModel* diar = nullptr;
    DiarStreamingParams diar_params;
    // The sound part: a scorer with its class count (scorer empty: no sound part).
    SoundScorer sound_scorer;
    int sound_classes = 0, sound_rate = 16000;
    SoundOptions sound;
    // The speaker part (embed empty: none); needs `diar`.
    speaker::LiveSlotNames::Embed speaker_embed;
    speaker::LiveSlotNames::Identify speaker_identify;
    speaker::LiveNamingOptions naming;
    int sample_rate = 16000;  // of the audio fed, every model's rate
};

enum class ScenePart { None, Diarization, Speaker, Asr, Sound };

struct SceneWord {
    TranscriptWord word;
    int speaker = -1;
    speaker::SlotName name;  // the slot's name when the word committed
};

// What one feed gives.
struct SceneUpdate {
    double t = 0;                                // seconds fed so far
    std::map<int, speaker::SlotName> names;      // every slot seen (with a speaker part)
    std::vector<SceneWord> words;                // committed in this feed, in order
    std::vector<DiarSegment> speakers;           // closed in this feed
    std::vector<DiarSegment> active_speakers;    // open now (end: the time diarized)
    std::vector<SoundSegment> sounds;            // closed in this feed
    std::vector<SoundSegment> active_sounds;     // open now (end: t)
};

class SceneStream {
public:
    // Without diarization, the ASR's commit rule is checked once per this much audio.
    static constexpr double kAsrStepSec = 1.0;

    // Throws InvalidArgument for no part at all, a speaker part without diarization, a model at
    // another rate than sample_rate or bad options; and what the parts' constructors throw.
    explicit SceneStream(const SceneParts& parts);

    // Runs the parts on n samples; `last` ends the stream. Throws what a part throws
    // (failed_part() names it) and InvalidArgument after the last feed.
    SceneUpdate feed(const float* samples, int64_t n, bool last);
    // The sound part's scored windows since the last drain (none without a sound part).
    std::vector<ScoredWindow> drain_scores();

    bool has_speaker() const { return namer_.has_value(); }
    ScenePart failed_part() const { return part_; }

private:
    void step(const float* samples, int64_t n, bool last, SceneUpdate& u);
    void transcribe(const float* samples, int64_t n, bool last, SceneUpdate& u);

    int rate_;
    int64_t step_;       // samples per step
    int64_t total_ = 0;  // samples fed
    bool finished_ = false;
    ScenePart part_ = ScenePart::None;
    std::optional<SasStream> sas_;          // ASR with diarization
    std::optional<DiarStream> diar_;        // diarization without ASR
    std::optional<SasCommitter> asr_;       // ASR without diarization
    std::optional<speaker::LiveSlotNames> namer_;
    std::optional<SoundStream> sound_;
};

}  // namespace pk
