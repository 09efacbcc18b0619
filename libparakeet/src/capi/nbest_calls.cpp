// The N-best entry points of the C ABI (parakeet.cpp's transcribe_*_nbest_json): NeMo's
// transducer beam search (model/decoder/beam_search.h) and the document
// {"beam_size", "score_norm", "frame_sec", "hypotheses": [{"text", "score", "normalized_score",
//  "tokens": [{"id", "frame", "t", "duration_frames", "duration"}]}]}, best first — and, ours
// beyond parakeet.cpp's keys (as in the transcript document): top-level "duration" (seconds of
// audio) and "attention", per token "conf" and "dur" (= duration_frames), per hypothesis
// "words", so that each hypothesis carries a whole transcript.
// parakeet.cpp searches TDT heads only; RNN-T heads get NeMo's RNN-T beam search here.
#include <cstdint>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "capi/attention_json.h"
#include "capi/context.h"
#include "capi/progress_callback.h"
#include "capi/transcript_json.h"
#include "common/errors.h"
#include "common/json_writer.h"
#include "parakeet_capi.h"

using pk::capi::guarded;

namespace {

pk::RequestOptions nbest_options(parakeet_ctx* ctx, int beam_size, int nbest, int score_norm,
                                 parakeet_progress_fn fn = nullptr, void* user_data = nullptr,
                                 const char* lang = nullptr) {
    pk::capi::asr_model(ctx);
    if (beam_size < 1 || nbest < 1 || nbest > beam_size)
        throw pk::InvalidArgument("N-best decoding requires beam_size >= nbest >= 1 (got beam_size " +
                               std::to_string(beam_size) + ", nbest " + std::to_string(nbest) + ")");
    pk::RequestOptions options(pk::DecoderChoice::Transducer);
    options.beam.beam_size = beam_size;
    options.beam.nbest = nbest;
    options.beam.score_norm = score_norm != 0;
    options.progress = pk::capi::progress_from(fn, user_data);
    if (lang != nullptr) options.language = lang;  // a prompt model's locale (NULL, "": its default)
    return options;
}

std::string nbest_json(const std::vector<pk::ScoredTranscript>& hyps, const pk::RequestOptions& o,
                       double audio_seconds) {
    const double frame_sec = hyps.front().transcript.frame_sec;  // never empty: see beam_search.h
    pk::JsonWriter j;
    j.begin_object();
    j.key("beam_size").value(o.beam.beam_size);
    j.key("score_norm").value(o.beam.score_norm);
    j.key("frame_sec").value(frame_sec, 6);
    j.key("duration").value(audio_seconds, 3);
    j.key("attention");
    pk::capi::write_attention(j, hyps.front().transcript.attention);
    j.key("hypotheses").begin_array();
    for (const pk::ScoredTranscript& h : hyps) {
        j.begin_object();
        j.key("text").value(h.transcript.text);
        j.key("score").value(h.score, 6);
        j.key("normalized_score").value(h.normalized_score, 6);
        j.key("tokens").begin_array();
        for (const pk::TranscriptToken& t : h.transcript.tokens) {
            j.begin_object();
            pk::capi::write_token_fields(j, t, frame_sec);
            j.key("frame").value(t.frame);  // parakeet.cpp's keys beyond the transcript's
            j.key("duration_frames").value(t.duration);
            j.key("duration").value(t.duration * frame_sec, 3);
            j.end_object();
        }
        j.end_array();
        j.key("words");
        pk::capi::write_words(j, h.transcript.words);
        j.end_object();
    }
    j.end_array();
    j.end_object();
    return j.str();
}

char* run(parakeet_ctx* ctx, const pk::RequestOptions& o, const float* samples, int64_t n, int sample_rate) {
    const std::vector<pk::ScoredTranscript> hyps = pk::capi::asr_model(ctx).transcribe_nbest(samples, n, sample_rate, o);
    const double seconds = sample_rate > 0 ? static_cast<double>(n) / sample_rate : 0.0;
    return pk::capi::to_c_string(nbest_json(hyps, o, seconds));
}

}  // namespace

extern "C" {

// target_lang selects a prompt model's locale; other models ignore it (as parakeet.cpp's do).
char* parakeet_capi_transcribe_path_nbest_json(parakeet_ctx* ctx, const char* wav_path, int beam_size, int nbest,
                                               int score_norm, const char* target_lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        const pk::RequestOptions o = nbest_options(ctx, beam_size, nbest, score_norm, nullptr, nullptr, target_lang);
        if (wav_path == nullptr) throw pk::InvalidArgument("WAV path is NULL");
        const pk::WavAudio wav = pk::read_wav_file(wav_path, 0);
        return run(ctx, o, wav.samples.data(), static_cast<int64_t>(wav.samples.size()), wav.sample_rate);
    });
}

char* parakeet_capi_transcribe_pcm_nbest_json(parakeet_ctx* ctx, const float* samples, int n_samples,
                                              int sample_rate, int beam_size, int nbest, int score_norm,
                                              const char* target_lang) {
    return guarded<char*>(ctx, nullptr, [&] {
        const pk::RequestOptions o = nbest_options(ctx, beam_size, nbest, score_norm, nullptr, nullptr, target_lang);
        return run(ctx, o, samples, n_samples, sample_rate);
    });
}

char* parakeet_capi_transcribe_pcm_nbest_json_progress(parakeet_ctx* ctx, const float* samples, int n_samples,
                                                       int sample_rate, int beam_size, int nbest, int score_norm,
                                                       parakeet_progress_fn fn, void* user_data) {
    return guarded<char*>(ctx, nullptr, [&] {
        const pk::RequestOptions o = nbest_options(ctx, beam_size, nbest, score_norm, fn, user_data);
        return run(ctx, o, samples, n_samples, sample_rate);
    });
}

}  // extern "C"
