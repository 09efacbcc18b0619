// Speaker-attributed words: which diarization speaker said each ASR word, and the utterances
// (runs of one speaker) they form. parakeet.cpp's ABI 7 rule (its sas_merge), restated:
//
//   1. A word goes to the speaker whose segment overlaps it most (overlap = the length of the
//      intersection, > 0). Segments are scanned in the order given (start, then speaker); the
//      first maximum wins a tie.
//   2. A word that overlaps no segment goes to the nearest segment whose gap to the word is at
//      most 0.5 s; on equal gaps the later segment (in scan order) wins. A zero-length word
//      (start == end, as a decoder emits for a token without duration) inside segments has gap
//      0 to each of them, so it takes the last of those.
//   3. Otherwise its speaker is -1.
//
// Times are compared with a 1e-9 s tolerance, so that a gap written as 0.5 (segment times are
// multiples of 10 ms, word times of the encoder frame) is within 0.5 s even where the binary
// subtraction comes out a hair above it. An utterance is a run of consecutive words of one
// speaker with gaps of at most 0.5 s: its text is the words joined by spaces, its confidence the
// minimum of theirs.
#pragma once

#include <string>
#include <vector>

#include "model/diar/diar_segments.h"
#include "model/transcript/transcript.h"

namespace pk {

// The largest gap (s) over which a word without overlap still takes a segment's speaker, and
// the largest pause inside one utterance.
constexpr double kSasMaxGapSec = 0.5;

// One speaker per word (-1: none), by the rule above.
std::vector<int> word_speakers(const std::vector<TranscriptWord>& words, const std::vector<DiarSegment>& segments);

struct SasItem {
    int speaker = -1;
    std::string text;
    double start = 0.0;
    double end = 0.0;
    float confidence = 0.f;
};

// The utterance of each word (0, 1, ... in word order): words[i] said by speakers[i] (same length).
std::vector<int> utterance_numbers(const std::vector<TranscriptWord>& words, const std::vector<int>& speakers);

// words[i] said by speakers[i] (same length), grouped into utterances in word order.
std::vector<SasItem> speaker_utterances(const std::vector<TranscriptWord>& words, const std::vector<int>& speakers);

}  // namespace pk
