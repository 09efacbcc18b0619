#include "model/vad/vad_detect.h"

#include <algorithm>
#include <string>

#include "common/errors.h"
#include "model/vad/vad_stream.h"

namespace pk {

VadResult detect_speech(const SileroVad& model, const float* pcm, int64_t n, int sample_rate,
                        const VadOptions& options, ThreadTeam* team, const ProgressSpan& progress) {
    if (n < 0 || (n > 0 && pcm == nullptr)) throw InvalidArgument("invalid samples buffer");
    int rate = sample_rate;
    int64_t step = 1;
    if (rate > 16000 && rate % 16000 == 0) {
        step = rate / 16000;
        rate = 16000;
    }
    if (model.branch(rate) == nullptr)
        throw InvalidAudio("invalid sample rate " + std::to_string(sample_rate) +
                           ": the Silero VAD takes 16000 or 8000 Hz (or a multiple of 16000); resample first");
    std::vector<float> decimated;
    if (step > 1) {
        decimated.reserve(static_cast<size_t>((n + step - 1) / step));
        for (int64_t i = 0; i < n; i += step) decimated.push_back(pcm[i]);
        pcm = decimated.data();
        n = static_cast<int64_t>(decimated.size());
    }
    VadOptions speech = options;
    speech.mode = VadMode::Speech;
    speech.max_segment = options.effective_max_segment();
    VadStream stream(model, rate, speech);
    VadResult r;
    // Fed in blocks of 2048 chunks (a minute at 16 kHz, the feed's own block of features), so a
    // progress callback can stop a long recording between them; the stream's probabilities do
    // not depend on how its audio is cut into feeds.
    const int64_t block = 2048 * static_cast<int64_t>(stream.chunk());
    int64_t at = 0;
    do {
        progress.at(n == 0 ? 0.0 : static_cast<double>(at) / static_cast<double>(n));
        const int64_t take = std::min(block, n - at);
        VadFeedResult fed = stream.feed(pcm + at, take, at + take == n, team);
        r.probabilities.insert(r.probabilities.end(), fed.probabilities.begin(), fed.probabilities.end());
        at += take;
    } while (at < n);
    progress.at(1.0);

    r.model_rate = rate;
    r.duration = static_cast<double>(n * step) / sample_rate;
    r.frame_sec = static_cast<double>(stream.chunk()) / rate;
    for (const SampleSpan& s : stream.segmenter().padded(n))
        r.segments.push_back({static_cast<double>(s.start) / rate, static_cast<double>(s.end) / rate});
    if (options.mode == VadMode::Segments) {
        // Merge neighbours while the piece stays within max_segment; each piece starts at a
        // segment's start and ends at a segment's end, so cuts fall in pauses.
        const double cap = options.effective_max_segment();
        std::vector<VadSegment> pieces;
        for (const VadSegment& s : r.segments) {
            if (!pieces.empty() && s.end - pieces.back().start <= cap)
                pieces.back().end = s.end;
            else
                pieces.push_back(s);
        }
        r.segments = std::move(pieces);
    }
    return r;
}

}  // namespace pk
