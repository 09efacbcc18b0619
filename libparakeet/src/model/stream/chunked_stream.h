// ChunkedStream: live transcription of an offline model by NeMo's buffered chunked inference
// (chunk_schedule.h has the windows). Each chunk's window runs the model's offline front end
// and encoder on that window's audio alone (its own mel normalisation), only the chunk's
// frames are decoded, and the decoder state carries over: for TDT/RNN-T the prediction net
// state, the last label and (TDT) how far a duration jumped past the chunk's end; for CTC the
// last frame's label, so repeats collapse across chunk borders. Text is never merged or
// revised: a token, once decoded, is final.
//
// A stream holds no backend between calls: each chunk leases one from the model's pool (or
// the process-wide backend) only while it computes. Everything a stream carries lives in the
// stream (its audio tail, the decoder state, the words not yet complete). One thread at a
// time per stream; the model must outlive it.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "model/decoder/stream_carry.h"
#include "model/model.h"
#include "model/stream/chunk_schedule.h"
#include "model/stream/stream_settings.h"

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
    std::string partial;                  // the open word plus the right context's greedy text
    int64_t chunks = 0;                   // chunks decoded so far
    double audio_sec = 0.0;               // audio fed so far
    double final_sec = 0.0;               // audio whose text is final
    bool finalized = false;
};

class ChunkedStream {
public:
    // Throws InvalidArgument for bad settings or a decoder the model does not have.
    ChunkedStream(const Model& model, const StreamSettings& settings);
    ~ChunkedStream();
    ChunkedStream(const ChunkedStream&) = delete;
    ChunkedStream& operator=(const ChunkedStream&) = delete;

    // Appends n samples at the model's sample rate and decodes every chunk now complete.
    // Throws InvalidArgument (bad buffer, non-finite samples, after finalize).
    StreamUpdate feed(const float* samples, int64_t n);
    // Decodes the remaining audio as the last chunk; the stream then takes no more audio.
    StreamUpdate finalize();

    // Every final token so far and the transcript they make (word times, text).
    const std::vector<TranscriptToken>& tokens() const { return tokens_; }
    Transcript transcript() const;

    const StreamContext& context() const { return ctx_; }
    double frame_sec() const { return frame_sec_; }
    bool finalized() const { return finalized_; }

private:
    StreamUpdate run_ready(bool final);
    void run_chunk(const ChunkWindow& w);
    // Decodes n_frames frames of enc continuing from `carry`, with frames from first_frame,
    // appending to `out` (<EOU>/<EOB> taken out into `events` when given).
    void decode_frames(Backend& b, const float* enc, int64_t n_frames, int64_t first_frame, StreamCarry& carry,
                       std::vector<TranscriptToken>& out, std::vector<StreamEvent>* events) const;
    // Moves the complete words (all of them when `all`) from the open tail to `u`.
    void commit_words(bool all, StreamUpdate& u);
    TimestampRule rule() const;

    const Model& model_;
    StreamContext ctx_;
    ChunkSchedule schedule_;
    bool use_ctc_ = false;
    double frame_sec_ = 0.0;
    int eou_id_ = -1, eob_id_ = -1;  // <EOU> / <EOB> in the vocabulary, or -1

    std::vector<float> audio_;  // samples [audio_start_, received_)
    int64_t audio_start_ = 0;
    int64_t received_ = 0;
    bool finalized_ = false;

    StreamCarry carry_;           // decoder state between chunks
    int64_t decoded_frames_ = 0;  // encoder frames decoded so far (NeMo's decoded_lengths)
    std::vector<TranscriptToken> tokens_;     // every final token (no <EOU>/<EOB>)
    size_t committed_ = 0;        // tokens_[0, committed_) form the words already returned;
                                  // the rest is the open tail
    std::string committed_text_;  // the text of tokens_[0, committed_)
    std::vector<TranscriptToken> tentative_;  // decoded from the last right context
    std::string partial_;         // text of the open tail and tentative_, as of the last chunk
    std::vector<StreamEvent> pending_events_;
};

}  // namespace pk
