#include "model/stream/live_stream.h"

#include <cmath>
#include <string>

#include "common/errors.h"
#include "model/model.h"
#include "model/stream/stream_batch.h"

namespace pk {

void check_feed(const float* samples, int64_t n, int64_t received, bool finalized) {
    if (finalized) throw InvalidArgument("the stream is finalized: it takes no more audio");
    if (n < 0) throw InvalidArgument("the number of samples is negative (" + std::to_string(n) + ")");
    if (n > 0 && samples == nullptr) throw InvalidArgument("the sample buffer is NULL");
    for (int64_t i = 0; i < n; ++i) {
        if (!std::isfinite(samples[i]))
            throw InvalidAudio("sample " + std::to_string(received + i) + " is not a finite number (NaN or Inf)");
    }
}

namespace {

// The ready chunks of `s`, alone, on a backend leased for them.
void run_alone(LiveStream& s) {
    if (!s.chunk_ready()) return;
    const BackendLease lease = s.model().lease_backend();
    run_stream_batch({&s}, lease.backend());
}

}  // namespace

StreamUpdate LiveStream::feed(const float* samples, int64_t n) {
    take_audio(samples, n);
    run_alone(*this);
    return take_update();
}

StreamUpdate LiveStream::finalize() {
    end_audio();
    run_alone(*this);
    return take_update();
}

}  // namespace pk
