#include "model/sas/sas_stream.h"

#include <cmath>

namespace pk {

SasStream::SasStream(const Model& asr, const DiarModel& diar, const DiarStreamingParams& params)
    : rate_(diar.config().pre.sample_rate),
      step_(std::llround(diar.config().frame_sec * rate_)),
      diarizer_(diar, params),
      committer_(rate_, [&asr, rate = rate_](const float* s, int64_t n) {
          return asr.transcribe(s, n, rate, RequestOptions()).words;
      }) {}

std::vector<DiarSegment> SasStream::diarize(const float* samples, int64_t n, bool last) {
    std::vector<DiarSegment> closed = diarizer_.feed(samples, n, last);
    closed_.insert(closed_.end(), closed.begin(), closed.end());
    return closed;
}

SasWords SasStream::commit(const float* samples, int64_t n, bool last) {
    committer_.append(samples, n);
    SasWords out;
    out.words = committer_.commit(diarizer_.time(), last);
    std::vector<DiarSegment> known = closed_;
    for (const DiarSegment& g : open_segments()) known.push_back(g);
    out.speakers = word_speakers(out.words, known);
    // Closed segments that end over a second before the window cannot reach a later word (it
    // starts at or after the window; the nearest-segment rule looks 0.5 s back).
    const double keep_from = committer_.window_start_sec() - 1.0;
    std::vector<DiarSegment> kept;
    for (const DiarSegment& g : closed_)
        if (g.end >= keep_from) kept.push_back(g);
    closed_.swap(kept);
    return out;
}

}  // namespace pk
