// CacheAwareStream: live transcription of a cache-aware streaming model exactly as NeMo's
// cache-aware pipeline runs it (CacheAwareStreamingAudioBuffer + conformer_stream_step, the way
// examples/asr/asr_cache_aware_streaming/speech_to_text_cache_aware_streaming_infer.py does):
//
//   * the log-mel frames are computed as the audio arrives; with no feature normalisation a
//     frame depends only on its own samples, so each equals the whole-clip frame once its
//     window is complete. At the end the frames up to the audio's end follow, plus the one zero
//     frame NeMo's preprocessor puts past the valid length;
//   * the chunks are NeMo's (in mel frames, factor 8, context [L, R]): the first 1 + 8R frames,
//     every later one 8 + 8R with the 9 frames before it in front (zeros before the stream
//     start) whose first 2 subsampled frames are dropped; a chunk runs as soon as all its frames
//     exist, and at the end the remainder runs as a last, shorter chunk unless it is under 8
//     frames (1 for the first), which NeMo does not process either;
//   * the encoder runs the step on the layers' caches (FastConformerEncoder::stream_step), a
//     prompt model's prompt network maps its output (as conformer_stream_step's
//     _apply_prompt_to_encoded does once set_inference_prompt chose the locale), and
//     the decoder continues from the previous step's state (StreamDecoder), as
//     conformer_stream_step continues from the previous hypotheses / pred_out.
//
// Like ChunkedStream, a stream holds no backend between calls (each call that computes leases
// one), one thread at a time per stream, and the model must outlive it. A CacheAwareBatch runs
// the chunks of several streams as batched steps (LiveStream's halves of feed and finalize).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/encoder/stream_cache.h"
#include "model/model.h"
#include "model/stream/live_stream.h"
#include "model/stream/stream_decoder.h"

namespace pk {

// NeMo's streaming_cfg for a context, in mel frames (setup_streaming_params, chunked_limited,
// dw_striding with factor f): chunk / shift sizes, the pre-encode cache and the frames dropped.
struct CacheAwareSchedule {
    int64_t first_chunk = 0;   // 1 + f R
    int64_t chunk = 0;         // f + f R
    int64_t pre_cache = 0;     // f + 1 mel frames in front of every chunk after the first
    int64_t drop = 0;          // 1 + (pre_cache - 1) / f subsampled frames dropped (not on the first)
    int64_t min_first = 1;     // a chunk shorter than this is not processed (sampling frames)
    int64_t min_chunk = 0;     // f
    static CacheAwareSchedule of(const AttContext& c, int subsampling_factor);
};

class CacheAwareBatch;

class CacheAwareStream : public LiveStream {
public:
    // `language`: a prompt model's locale (empty: its default; other models ignore it).
    // Throws InvalidArgument for a model that is not cache-aware, a context not among the
    // model's or a locale not in its prompt table, Unsupported for a head it lacks.
    CacheAwareStream(const Model& model, const AttContext& context, DecoderChoice decoder,
                     const std::string& language = {});

    void take_audio(const float* samples, int64_t n) override;
    void end_audio() override;
    bool chunk_ready() const override;
    StreamUpdate take_update() override;

    const Model& model() const override { return model_; }
    const std::vector<TranscriptToken>& tokens() const override { return decoder_.tokens(); }
    Transcript transcript() const override;
    const AttContext& context() const { return cache_.context; }
    const CacheAwareSchedule& schedule() const { return schedule_; }
    double frame_sec() const override { return frame_sec_; }
    bool finalized() const override { return finalized_; }
    int64_t steps() const { return steps_; }

private:
    friend class CacheAwareBatch;
    // The next chunk [start, start + size) in mel frames, if it can run now.
    bool next_chunk(int64_t& start, int64_t& size) const;
    // The encoder input of the next chunk, in b's arena, when one is ready (CacheAwareBatch).
    bool prepare_step(Backend& b, EncoderStep& step);
    // The rest of the step, given its T encoder frames, in two halves around its decoding
    // (which CacheAwareBatch runs for all the streams of a round at once, on decoder_): the
    // prompt, then the bookkeeping.
    void prompt_step(Backend& b, float* enc, int64_t T);
    void finish_step();
    // Computes the mel frames up to `end` (exclusive) that are not computed yet; once the audio
    // has ended, frames past the valid ones are NeMo's zero frame.
    void extend_mel(Backend& b, int64_t end);
    int64_t next_start() const;

    const Model& model_;
    CacheAwareSchedule schedule_;
    double frame_sec_ = 0.0;
    int n_mels_ = 0;
    int prompt_ = -1;  // the prompt id every step's encoder output gets (-1: none)

    std::vector<float> audio_;  // samples [audio_start_, received_)
    int64_t audio_start_ = 0;
    int64_t received_ = 0;
    bool ended_ = false;      // end_audio() was called
    bool finalized_ = false;  // the final update was taken

    std::vector<float> mel_;  // frames [mel_start_, mel_end_), time-major
    int64_t mel_start_ = 0;
    int64_t mel_end_ = 0;

    int64_t steps_ = 0;           // chunks run
    int64_t steps_reported_ = 0;  // steps_ as of the last update
    EncoderStreamCache cache_;
    StreamDecoder decoder_;
};

}  // namespace pk
