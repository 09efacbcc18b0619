// Which audio of a diarized speaker slot is clean enough to embed: parakeet.cpp's rule for
// naming diarized slots (its speaker_identifier), offline form. A slot's clean audio is its
// segments minus every moment another slot speaks, kept in pieces of at least 0.2 s, of which
// the newest `max_voice_sec` are used.
#pragma once

#include <vector>

#include "model/diar/diar_segments.h"

namespace pk::speaker {

struct TimeSpan {
    double start = 0, end = 0;  // seconds
};

struct CleanVoiceRules {
    double min_piece_sec = 0.2;
    double max_voice_sec = 30.0;  // the offline calls' window (parakeet.cpp: at least 30 s)
};

// The clean spans of `slot` in time order, cut to the newest max_voice_sec.
std::vector<TimeSpan> clean_voice(const std::vector<DiarSegment>& segments, int slot, const CleanVoiceRules& rules = {});

// The spans' total length in seconds.
double total_seconds(const std::vector<TimeSpan>& spans);

}  // namespace pk::speaker
