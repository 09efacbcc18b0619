// StreamDecoder: the decoding half of a live stream, shared by the buffered (ChunkedStream) and
// the cache-aware (CacheAwareStream) streams. It decodes encoder frames as they come with the
// decoder state carried across calls (stream_carry.h), keeps every final token, takes
// <EOU>/<EOB> out as events, and turns the tokens into what an update reports: the words that
// became complete, the text that became final (the updates' texts add up to the transcript's
// text exactly) and the tentative partial text. Text is never revised: a token, once decoded,
// is final.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/decoder/stream_carry.h"
#include "model/model.h"

namespace pk {

// An <EOU> / <EOB> token decoded by the stream.
struct StreamEvent {
    int token = 0;
    bool is_eob = false;
    int frame = 0;  // encoder frame from the start of the stream
};

// What one feed / finalize made final, and what is still tentative.
struct StreamUpdate {
    std::string text;                     // new final text; all updates' texts concatenated are
                                          // the final transcript's text
    std::vector<TranscriptWord> words;    // words that became final (times from stream start)
    std::vector<TranscriptToken> tokens;  // tokens that became final (<EOU>/<EOB> excluded)
    std::vector<StreamEvent> events;      // <EOU>/<EOB> decoded during the call
    std::string partial;                  // the open word plus the tentative tokens' text
    int64_t chunks = 0;                   // chunks decoded so far
    double audio_sec = 0.0;               // audio fed so far
    double final_sec = 0.0;               // audio whose text is final
    bool finalized = false;
};

class StreamDecoder {
public:
    // Throws Unsupported for a head the model does not have.
    StreamDecoder(const Model& model, DecoderChoice decoder);

    // Decodes the next n frames of the stream (enc: [n, d_model]), appending to the final tokens.
    void decode(Backend& b, const float* enc, int64_t n);
    // decode() for several streams of one model at once: decoders[i] decodes the next ns[i]
    // frames of encs[i]. The greedy transducer steps of all of them run batched
    // (TransducerDecoder::decode_chunks); every stream's result is bitwise what decode() gives.
    static void decode_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                             const std::vector<const float*>& encs, const std::vector<int64_t>& ns);
    // Decodes n frames after those from a copy of the state: the tentative tokens (replacing the
    // previous ones). clear_tentative() drops them.
    void decode_tentative(Backend& b, const float* enc, int64_t n);
    // decode_tentative() for several streams of one model at once, batched as decode_batch.
    static void decode_tentative_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                                       const std::vector<const float*>& encs, const std::vector<int64_t>& ns);
    void clear_tentative() { tentative_.clear(); }

    // Fills u's text, words, tokens, partial and events. `changed`: frames were decoded since the
    // last call (the words and partial are recomputed only then); `final`: the stream ends, every
    // word is complete.
    void fill_update(bool final, bool changed, StreamUpdate& u);

    const std::vector<TranscriptToken>& tokens() const { return tokens_; }
    Transcript transcript() const;
    int64_t decoded_frames() const { return decoded_frames_; }
    bool uses_ctc() const { return use_ctc_; }
    TimestampRule rule() const;

private:
    // decode_batch (tentative false) or decode_tentative_batch (true).
    static void run_batch(Backend& b, const std::vector<StreamDecoder*>& decoders,
                          const std::vector<const float*>& encs, const std::vector<int64_t>& ns, bool tentative);
    void decode_into(Backend& b, const float* enc, int64_t n, int64_t first_frame, StreamCarry& carry,
                     std::vector<TranscriptToken>& out, std::vector<StreamEvent>* events) const;
    // Appends a transducer chunk's tokens (frames local to a chunk starting at first_frame).
    static void append_chunk(const std::vector<TranscriptToken>& chunk, int64_t first_frame,
                             std::vector<TranscriptToken>& out);
    // Takes the <EOU>/<EOB> tokens out of out[before, end) (into `events`, when not null).
    void take_events(size_t before, std::vector<TranscriptToken>& out, std::vector<StreamEvent>* events) const;
    void commit_words(bool all, StreamUpdate& u);

    const Model& model_;
    bool use_ctc_ = false;
    int eou_id_ = -1, eob_id_ = -1;  // <EOU> / <EOB> in the vocabulary, or -1

    StreamCarry carry_;           // decoder state between calls
    int64_t decoded_frames_ = 0;  // encoder frames decoded so far
    std::vector<TranscriptToken> tokens_;     // every final token (no <EOU>/<EOB>)
    size_t committed_ = 0;        // tokens_[0, committed_) form the words already returned;
                                  // the rest is the open tail
    std::string committed_text_;  // the text of tokens_[0, committed_)
    std::vector<TranscriptToken> tentative_;
    std::string partial_;         // text of the open tail and tentative_, as of the last change
    std::vector<StreamEvent> pending_events_;
};

}  // namespace pk
