#include "model/vad/vad_cut.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/errors.h"
#include "model/request_progress.h"
#include "model/vad/vad_rate.h"
#include "runtime/thread_team.h"

namespace pk {

namespace {

// Chunk time -> recording time, for a chunk made of the given spans laid end to end.
class TimeMap {
public:
    TimeMap(const std::vector<std::pair<int64_t, int64_t>>& spans, int rate) {
        int64_t at = 0;
        for (const auto& [first, last] : spans) {
            starts_.push_back(static_cast<double>(at) / rate);
            origins_.push_back(static_cast<double>(first) / rate);
            at += last - first;
        }
    }
    double operator()(double t) const {
        const auto it = std::upper_bound(starts_.begin(), starts_.end(), t);
        const size_t i = it == starts_.begin() ? 0 : static_cast<size_t>(it - starts_.begin()) - 1;
        return origins_[i] + (t - starts_[i]);
    }

private:
    std::vector<double> starts_;   // where each span begins in the chunk, seconds
    std::vector<double> origins_;  // ... and in the recording
};

// The VAD's share of a request's progress reports (it costs a fifth of the uncut
// transcription on one thread, less on the model's threads); the chunks share the rest.
constexpr double kDetectShare = 0.1;

}  // namespace

std::vector<std::vector<std::pair<int64_t, int64_t>>> vad_cut_chunks(const std::vector<VadSegment>& segments,
                                                                     int sample_rate, int64_t n,
                                                                     double max_segment) {
    const auto cap = static_cast<int64_t>(max_segment * sample_rate);
    std::vector<std::vector<std::pair<int64_t, int64_t>>> chunks;
    int64_t total = 0;
    for (const VadSegment& s : segments) {
        const auto first = static_cast<int64_t>(std::llround(s.start * sample_rate));
        const int64_t last = std::min<int64_t>(n, std::llround(s.end * sample_rate));
        if (last <= first) continue;
        if (chunks.empty() || total + (last - first) > cap) {
            chunks.emplace_back();
            total = 0;
        }
        chunks.back().emplace_back(first, last);
        total += last - first;
    }
    return chunks;
}

VadCutTranscript transcribe_vad_cut(const Model& asr, const SileroVad& vad, const float* pcm, int64_t n,
                                    int sample_rate, VadOptions options, const RequestOptions& request) {
    if (options.mode != VadMode::Speech)
        throw InvalidArgument("VAD options: the cut uses speech segments; mode is not an option here");
    if (n < 0 || (n > 0 && pcm == nullptr)) throw InvalidArgument("invalid samples buffer");
    if (request.beam.beam_size > 0 || request.hotwords)
        throw InvalidArgument("a VAD-cut transcription takes no beam or hotwords");
    RequestProgress progress(request.progress);
    const ProgressSpan whole{&progress, 0.0, 1.0};
    whole.at(0.0);
    if (options.max_segment < 0) options.max_segment = kVadCutMaxSegment;
    VadCutTranscript out;
    out.frame_sec = asr.config().frame_seconds();
    std::vector<float> resampled;  // the chunks below are cut from it when the rate needed it
    {
        // The VAD runs at 16 kHz (and 8 kHz); the model resamples the same way on its own.
        // Its features run on the model's threads (its LSTM runs in order on one): a fifth of
        // the uncut time on one thread (docs/performance.md); the samples and segments are the
        // same on any team.
        ThreadTeam team(asr.thread_budget());
        resample_for_vad(pcm, n, sample_rate, resampled, team);
        out.duration = static_cast<double>(n) / sample_rate;
        out.segments = detect_speech(vad, pcm, n, sample_rate, options, &team, whole.sub(0.0, kDetectShare)).segments;
    }
    // Every chunk runs the attention the whole recording would: "auto" resolved for its length
    // (local [128, 128] past 48 s). Left to each chunk, auto would run full attention on
    // chunks of <= 30 s, which costs more per second than the uncut file's local attention
    // (docs/performance.md) and is another transcript than the uncut one. Cache-aware models
    // keep their own chunked attention.
    RequestOptions chunk_request = request;
    if (!chunk_request.attention && asr.config().enc.att_contexts.empty()) {
        const auto frames = static_cast<int64_t>(std::ceil(out.duration / out.frame_sec));
        chunk_request.attention = asr.attention().resolve(frames);
    }
    const auto chunks = vad_cut_chunks(out.segments, sample_rate, n, options.max_segment);
    int64_t speech = 0, done = 0;  // samples in all chunks, and in those transcribed
    for (const auto& spans : chunks)
        for (const auto& [first, last] : spans) speech += last - first;
    std::vector<float> audio;
    for (const auto& spans : chunks) {
        audio.clear();
        for (const auto& [first, last] : spans) audio.insert(audio.end(), pcm + first, pcm + last);
        if (progress.enabled()) {
            // The chunk's own reports as its share of the rest, by its length of speech; a
            // cancel throws Cancelled out of the chunk's request.
            const auto share = [&](int64_t samples) {
                return kDetectShare + (1.0 - kDetectShare) * static_cast<double>(samples) / static_cast<double>(speech);
            };
            const ProgressSpan part = whole.sub(share(done), share(done + static_cast<int64_t>(audio.size())));
            chunk_request.progress = [part](double f) {
                part.at(f);
                return true;
            };
        }
        done += static_cast<int64_t>(audio.size());
        const Transcript t =
            asr.transcribe(audio.data(), static_cast<int64_t>(audio.size()), sample_rate, chunk_request);
        const TimeMap to_file(spans, sample_rate);
        out.frame_sec = t.frame_sec;
        out.attention.push_back(t.attention);
        if (!t.text.empty()) out.text += (out.text.empty() ? "" : " ") + t.text;
        const int token_base = static_cast<int>(out.tokens.size());
        for (TranscriptWord w : t.words) {
            w.start_sec = to_file(w.start_sec);
            w.end_sec = std::max(w.start_sec, to_file(w.end_sec));
            w.first_token += token_base;
            out.words.push_back(std::move(w));
        }
        for (const TranscriptToken& k : t.tokens) {
            out.tokens.push_back(k);
            out.token_times.push_back(to_file(t.token_seconds(k)));
        }
    }
    whole.at(1.0);
    return out;
}

}  // namespace pk
