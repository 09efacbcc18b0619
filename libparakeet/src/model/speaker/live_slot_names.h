// Naming diarized slots while the audio arrives: parakeet.cpp's speaker identifier (its
// src/speaker_identifier.cpp, ABI 9), the live form of slot_names.h.
//
//   - Each slot keeps its newest max_voice_sec of clean audio: its segments minus every moment
//     another slot's open or recent segment covers (clean_voice.h), in pieces of at least
//     0.2 s, taken through a per-slot cursor so no audio is taken twice. The short clean tail of
//     a segment still open is held back and joined to what follows.
//   - A slot is embedded once it holds at least min_voice_sec: first then, again after every
//     refresh_sec of new audio, and at the last update.
//   - An unknown result keeps the current name; a name other than the current one must win
//     twice in a row to replace it (a first name is taken at once).
// Audio older than ring_sec is dropped, and with it the other slots' segments that ended before.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/diar/diar_segments.h"
#include "model/speaker/speaker_registry.h"

namespace pk::speaker {

struct LiveNamingOptions {
    float accept = SpeakerRegistry::kDefaultAccept;
    float margin = SpeakerRegistry::kDefaultMargin;
    float min_voice_sec = 2.f;
    float refresh_sec = 3.f;
    float max_voice_sec = 10.f;
    float ring_sec = 60.f;  // at least max_voice_sec (raised to it)
};

// Throws InvalidArgument "invalid speaker options: ..." unless min_voice > 0, refresh > 0,
// max_voice >= min_voice, accept in [-1, 1] and margin >= 0.
void validate_live_naming(const LiveNamingOptions& o);

struct SlotName {
    std::string name;  // "" until a registry speaker is accepted
    float score = 0;   // the cosine of the match that gave the name
};

class LiveSlotNames {
public:
    // The embedding of n samples at the stream's rate (may throw: the feed fails).
    using Embed = std::function<std::vector<float>(const float* samples, int64_t n)>;
    // The registry's match of an embedding at these thresholds.
    using Identify = std::function<SpeakerMatch(const std::vector<float>& embedding, float accept, float margin)>;

    LiveSlotNames(Embed embed, Identify identify, int sample_rate, const LiveNamingOptions& o);

    // Appends n samples of the stream.
    void push(const float* samples, int64_t n);
    // Takes the new clean audio of the segments that closed since the last update and of those
    // still open (their end: the time diarized), then embeds the slots that are due.
    void update(const std::vector<DiarSegment>& closed, const std::vector<DiarSegment>& open, bool last);

    // The current name of `slot` (empty for a slot never seen).
    SlotName name(int slot) const;
    // Every slot seen so far (it has had a segment), with its current name.
    std::map<int, SlotName> names() const;

private:
    struct Slot {
        std::vector<float> voice;  // the newest clean audio, at most max_voice
        double cursor = 0;         // audio before this was taken or passed over
        double gained_sec = 0;     // clean audio added since the last embedding
        bool embedded = false;
        SlotName current;
        std::string pending;       // a different name that won once
    };

    void consume(const DiarSegment& seg, const std::vector<DiarSegment>& open, bool growing);
    void add_audio(Slot& slot, double start, double end);
    void maybe_embed(Slot& slot, bool last);
    static void apply(Slot& slot, const SpeakerMatch& m);

    Embed embed_;
    Identify identify_;
    int rate_;
    LiveNamingOptions o_;
    std::vector<float> ring_;          // samples [ring_start_, total_)
    int64_t ring_start_ = 0, total_ = 0;
    std::vector<DiarSegment> history_;  // closed segments within the ring
    std::map<int, Slot> slots_;
};

}  // namespace pk::speaker
