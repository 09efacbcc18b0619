// ChunkedStream: live transcription of an offline model by NeMo's buffered chunked inference
// (chunk_schedule.h has the windows). Each chunk's window runs the model's offline front end
// and encoder on that window's audio alone (its own mel normalisation), only the chunk's
// frames are decoded, and the decoder state carries over (StreamDecoder): for TDT/RNN-T the
// prediction net state, the last label and (TDT) how far a duration jumped past the chunk's
// end; for CTC the last frame's label, so repeats collapse across chunk borders. Text is never
// merged or revised: a token, once decoded, is final.
//
// A stream holds no backend between calls: each chunk leases one from the model's pool (or
// the process-wide backend) only while it computes. Everything a stream carries lives in the
// stream (its audio tail, the decoder state, the words not yet complete). One thread at a
// time per stream; the model must outlive it. A ChunkedBatch runs the windows of several
// streams together (LiveStream's halves of feed and finalize).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/model.h"
#include "model/stream/chunk_schedule.h"
#include "model/stream/live_stream.h"
#include "model/stream/stream_decoder.h"
#include "model/stream/stream_settings.h"

namespace pk {

class ChunkedStream : public LiveStream {
public:
    // Throws InvalidArgument for bad settings or a decoder the model does not have.
    ChunkedStream(const Model& model, const StreamSettings& settings);
    ~ChunkedStream() override;
    ChunkedStream(const ChunkedStream&) = delete;
    ChunkedStream& operator=(const ChunkedStream&) = delete;

    void take_audio(const float* samples, int64_t n) override;
    void end_audio() override;
    bool chunk_ready() const override;
    StreamUpdate take_update() override;

    const Model& model() const override { return model_; }
    // Every final token so far and the transcript they make (word times, text).
    const std::vector<TranscriptToken>& tokens() const override { return decoder_.tokens(); }
    Transcript transcript() const override;

    const StreamContext& context() const { return ctx_; }
    double frame_sec() const override { return frame_sec_; }
    bool finalized() const override { return finalized_; }

private:
    friend class ChunkedBatch;
    // The window of the next chunk, if it can run now.
    std::optional<ChunkWindow> next_window() const;
    // The window's audio: [window_start, window_end) of the stream.
    const float* window_audio(const ChunkWindow& w) const { return audio_.data() + (w.window_start - audio_start_); }
    // Marks the window as run (its frames were decoded).
    void finish_window(const ChunkWindow& w) { schedule_.advance(w); }

    const Model& model_;
    StreamContext ctx_;
    ChunkSchedule schedule_;
    double frame_sec_ = 0.0;

    std::vector<float> audio_;  // samples [audio_start_, received_)
    int64_t audio_start_ = 0;
    int64_t received_ = 0;
    bool ended_ = false;      // end_audio() was called
    bool finalized_ = false;  // the final update was taken
    int64_t chunks_reported_ = 0;  // chunks run as of the last update

    StreamDecoder decoder_;  // the decoder state, the final tokens, the words returned
};

}  // namespace pk
