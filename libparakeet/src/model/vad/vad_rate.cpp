#include "model/vad/vad_rate.h"

#include "model/frontend/audio_input.h"
#include "model/frontend/resample.h"

namespace pk {

namespace {

constexpr int kVadRate = 16000;

}  // namespace

bool vad_takes_rate(int rate) { return rate == 8000 || (rate >= kVadRate && rate % kVadRate == 0); }

void resample_for_vad(const float*& pcm, int64_t& n, int& sample_rate, std::vector<float>& storage,
                      ThreadTeam& team) {
    if (vad_takes_rate(sample_rate)) return;
    check_sample_rate(sample_rate);
    const Resampler r(sample_rate, kVadRate);
    storage.resize(static_cast<size_t>(r.output_length(n)));
    r.process(team, pcm, n, storage.data());
    pcm = storage.data();
    n = static_cast<int64_t>(storage.size());
    sample_rate = kVadRate;
}

}  // namespace pk
