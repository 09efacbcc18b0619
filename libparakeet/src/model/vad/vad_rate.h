// The sample rates the Silero VAD takes, and audio at any other rate brought to one of them:
// for the calls that read a file or feed the ASR models too (the WAV path call, the VAD cut),
// which take any rate as the ASR calls do. The PCM calls keep Silero's own rule.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/thread_team.h"

namespace pk {

// 16000 and 8000, and a multiple of 16000 (decimated by taking every k-th sample, as Silero does).
bool vad_takes_rate(int rate);

// Leaves `pcm` / `n` / `sample_rate` as they are at a rate the VAD takes; otherwise resamples
// the audio to 16 kHz into `storage` with the ASR models' resampler and points them there.
// Rates outside AudioInput's range are InvalidAudio with its message. Any team size gives the
// same samples.
void resample_for_vad(const float*& pcm, int64_t& n, int& sample_rate, std::vector<float>& storage,
                      ThreadTeam& team);

}  // namespace pk
