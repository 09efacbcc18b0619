// TranscriptBuilder: turns decoded tokens into a Transcript — text, words, word times and
// word confidences — following NeMo 3.0.0's BPE decoding path:
//
// Text: tokenizer.decode(ids), then one whitespace removed before each supported punctuation
// mark (punctuation.h).
//
// Token offsets [start, end) in frames (rnnt_decoding.py / ctc_decoding.py _compute_offsets):
//   TDT   [frame, frame + duration]          (_compute_offsets_tdt)
//   RNN-T [frame, frame + 1]
//   CTC   token k: [frame of token k-1, frame of token k]; token 0: [max(0, frame - 1), frame]
//         (NeMo builds them from the cumulative frame gaps between tokens — yes, shifted)
// then refined for punctuation (_refine_timestamps*), when the model has any:
//   TDT   a token whose text is one mark, after the first: start = end = previous token's end
//   CTC   a token whose text starts with a mark, after the first: end = start
//
// Words (timestamp_utils.py get_words_offsets, "bpe", delimiter " "): a token starts a word
// when its piece differs from its own decoded text (a leading "▁", a byte or control piece)
// or its text is " " not followed by a mark; a token whose text is one supported mark is glued
// to the word being built or, if none, to the previous word. A word spans its tokens' offsets;
// seconds = offset * window_stride * subsampling_factor (process_timestamp_outputs).
//
// Word confidence: the minimum of its tokens' confidences (NeMo aggregation "min"). NeMo groups
// tokens for confidence separately (_aggregate_token_confidence_subwords_sentencepiece); the
// groups agree except after "<unk>" and for pieces like "▁." (where NeMo raises an error).
#pragma once

#include <string>
#include <vector>

#include "model/decoder/punctuation.h"
#include "model/text/tokenizer.h"
#include "model/transcript.h"

namespace pk {

enum class TimestampRule { Tdt, Rnnt, Ctc };

class TranscriptBuilder {
public:
    // `tokenizer` must outlive the builder. window_stride_sec = hop_length / sample_rate.
    TranscriptBuilder(const Tokenizer& tokenizer, double window_stride_sec, int subsampling_factor);

    // Throws InvalidArgument for a token id outside the tokenizer's vocabulary.
    Transcript build(std::vector<TranscriptToken> tokens, TimestampRule rule) const;

    const SupportedPunctuation& punctuation() const { return punctuation_; }

private:
    struct Offsets {
        int start;
        int end;
    };
    std::vector<Offsets> token_offsets(const std::vector<TranscriptToken>& tokens, TimestampRule rule) const;
    std::vector<TranscriptWord> words(const std::vector<TranscriptToken>& tokens,
                                      const std::vector<Offsets>& offsets) const;
    double seconds(int offset) const;

    const Tokenizer* tokenizer_;
    double window_stride_sec_;
    int subsampling_factor_;
    SupportedPunctuation punctuation_;
    std::vector<std::string> token_text_;   // decode({id}) of every id
    std::vector<char> starts_word_;         // piece != its text
    std::vector<char> is_mark_;             // text is one supported mark
    std::vector<char> starts_with_mark_;    // text starts with a supported mark
    std::vector<char> is_separator_piece_;  // piece is " ", "_" or "▁"
};

}  // namespace pk
