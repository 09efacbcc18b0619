// Transcript: what one request returns — the text, the emitted tokens with their encoder
// frames and confidences, and the words with times in seconds. The C ABI serialises it as
// JSON {"text", "frame_sec", "words": [{"w", "start", "end", "conf"}],
//       "tokens": [{"id", "t", "conf", "dur"}]}.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "model/encoder/attention_setting.h"

namespace pk {

// How a decoder's token frames become times (transcript/word_timestamps.h): each decoder says
// which rule its tokens follow.
enum class TimestampRule { Tdt, Rnnt, Ctc };

struct TranscriptToken {
    int id = 0;              // token id, never the blank
    int frame = 0;           // encoder frame it was emitted at (CTC: first frame of its run)
    int duration = 0;        // frames: TDT the predicted duration (may be 0), RNN-T 1,
                             // CTC the length of its run
    float confidence = 0.f;  // NeMo "max_prob" confidence of the step (CTC: min over the run)
};

struct TranscriptWord {
    std::string text;
    double start_sec = 0.0;
    double end_sec = 0.0;
    float confidence = 0.f;  // minimum over the word's tokens (NeMo aggregation "min")
    int first_token = 0;     // the word is tokens[first_token, first_token + n_tokens)
    int n_tokens = 0;
};

// What a hotword decode did with its phrase graph (decoder/context_graph.h): the JSON
// "context" object.
struct ContextStats {
    long transitions = 0;        // tokens emitted (each moves the graph)
    long candidate_checks = 0;   // candidates scored
    long completed_phrases = 0;  // phrase ends reached
    long failed_prefixes = 0;    // partial matches broken off (a bonus given back)
    double final_rollback = 0;   // finalize() of the last state (<= 0)
};

struct Transcript {
    std::string text;
    double frame_sec = 0.0;  // seconds per encoder frame (0.08 for 10 ms hops, 8x subsampling)
    std::vector<TranscriptToken> tokens;
    std::vector<TranscriptWord> words;
    // The attention the encoder ran (Full or Local, never Auto).
    AttentionSetting attention = AttentionSetting::full();
    // With hotwords (RequestOptions::hotwords): what the phrase graph did.
    std::optional<ContextStats> context;

    double token_seconds(const TranscriptToken& t) const { return t.frame * frame_sec; }
};

}  // namespace pk
