// VAD-cut transcription: a recording transcribed at its speech only. The VAD's speech segments
// (speech mode, padded) are grouped in order into chunks of at most max_segment seconds of
// speech (default 30 s); each chunk is its segments' audio laid end to end, transcribed on its
// own; every word and token time is mapped back from the chunk onto the recording's timeline,
// segment by segment. The silence between segments is never transcribed. One implementation
// for the C ABI (parakeet_capi_transcribe_{pcm,path}_json_vad_with), Python's
// Context.transcribe(vad=) and the command line.
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.h"
#include "model/transcript/transcript.h"
#include "model/vad/silero_model.h"
#include "model/vad/vad_detect.h"
#include "model/vad/vad_options.h"

namespace pk {

// The chunks' default length of speech, seconds (the max_segment option overrides it).
inline constexpr double kVadCutMaxSegment = 30.0;

struct VadCutTranscript {
    std::string text;                 // the chunks' texts joined by spaces
    double frame_sec = 0.0;           // the model's encoder frame
    double duration = 0.0;            // seconds of input
    std::vector<TranscriptWord> words;      // times on the recording's timeline
    std::vector<TranscriptToken> tokens;    // first_token indexes of words point here
    std::vector<double> token_times;        // each token's time on the recording's timeline
    std::vector<VadSegment> segments;       // the speech segments that were transcribed
    std::vector<AttentionSetting> attention;  // what each chunk's encoder ran
};

// [first, last) sample spans of the segments, grouped into chunks of at most max_segment
// seconds of audio (a longer segment is a chunk of its own: the VAD's max_segment cut it).
std::vector<std::vector<std::pair<int64_t, int64_t>>> vad_cut_chunks(const std::vector<VadSegment>& segments,
                                                                     int sample_rate, int64_t n,
                                                                     double max_segment);

// `pcm` at `sample_rate` (the VAD's rates natively: 8000, 16000 and multiples of 16000; any
// other rate the model takes is resampled to 16 kHz first). options.mode must be speech.
// request.progress (optional) gets the VAD's reports and then each chunk's, as one request's
// fractions; returning false stops the cut at its next report (Cancelled).
VadCutTranscript transcribe_vad_cut(const Model& asr, const SileroVad& vad, const float* pcm, int64_t n,
                                    int sample_rate, VadOptions options, const RequestOptions& request);

}  // namespace pk
