// Shared helpers of the pool tests: the fixture model, clips, and exact transcript comparison.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "model/model.h"
#include "nemo_fixtures.h"
#include "process_threads.h"

namespace pool_test {

inline std::string model_path() { return nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc/model.gguf"; }

// A few clips of different lengths (speech, 1 s, 0.1 s, silence).
inline std::vector<std::vector<float>> clips() {
    std::vector<std::vector<float>> out;
    for (const char* name : {"speech_16k.wav", "short_1s_16k.wav", "short_0p1s_16k.wav", "silence_2s_16k.wav"})
        out.push_back(pk::read_wav_file(nemo_fixtures::data_dir() + "/audio/" + name, 0).samples);
    return out;
}

inline bool quick() {
    const char* q = std::getenv("PARAKEET_STRESS_QUICK");
    return q != nullptr && q[0] == '1';
}

// Bitwise equality of everything a transcript holds.
inline bool same(const pk::Transcript& a, const pk::Transcript& b) {
    if (a.text != b.text || a.tokens.size() != b.tokens.size() || a.words.size() != b.words.size()) return false;
    for (size_t i = 0; i < a.tokens.size(); ++i) {
        const auto &x = a.tokens[i], &y = b.tokens[i];
        if (x.id != y.id || x.frame != y.frame || x.duration != y.duration || x.confidence != y.confidence)
            return false;
    }
    for (size_t i = 0; i < a.words.size(); ++i) {
        const auto &x = a.words[i], &y = b.words[i];
        if (x.text != y.text || x.start_sec != y.start_sec || x.end_sec != y.end_sec || x.confidence != y.confidence)
            return false;
    }
    return true;
}

inline int thread_count() { return process_thread_count(); }

}  // namespace pool_test
