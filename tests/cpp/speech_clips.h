// Shared by the tests of sets of requests (test_request_set, test_capi_batch_calls): clips of
// varied lengths cut from the fixture speech (tests/data/audio: speech and conversation, 23.6 s
// at 16 kHz), at places and lengths drawn from a seed, so every run cuts the same.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "nemo_fixtures.h"

namespace speech_clips {

constexpr int kRate = 16000;

// tests/data/audio/<name>'s samples.
inline std::vector<float> wav(const std::string& name) {
    return pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + name, 0).samples;
}

// The fixture speech, read once.
inline const std::vector<float>& speech() {
    static const std::vector<float> s = [] {
        std::vector<float> out = wav("speech_16k.wav");
        const std::vector<float> more = wav("conversation_16k.wav");
        out.insert(out.end(), more.begin(), more.end());
        return out;
    }();
    return s;
}

// `count` clips of the fixture speech, `lo` to `hi` seconds long (at most its 23.6 s).
inline std::vector<std::vector<float>> cut(size_t count, double lo, double hi, uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> seconds(lo, hi);
    std::vector<std::vector<float>> clips;
    for (size_t i = 0; i < count; ++i) {
        const auto n = static_cast<size_t>(seconds(rng) * kRate);
        const size_t at = std::uniform_int_distribution<size_t>(0, speech().size() - n)(rng);
        clips.emplace_back(speech().begin() + static_cast<std::ptrdiff_t>(at),
                           speech().begin() + static_cast<std::ptrdiff_t>(at + n));
    }
    return clips;
}

}  // namespace speech_clips
