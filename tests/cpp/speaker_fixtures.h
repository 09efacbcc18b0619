// The speaker-encoder fixtures in tests/data/speaker (tools/fixtures/make_speaker_fixtures.py,
// docs/fixtures.md): ecapa_tiny.gguf (a small SpeechBrain ECAPA_TDNN with seeded random weights,
// through our converter) and ref_<clip>.gguf, each with the clip's 16 kHz samples (`pcm`),
// torchaudio's Kaldi fbank minus the bin means (`fbank`, [frames, 80]) and SpeechBrain's
// L2-normalised embedding (`embedding`).
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "test_data_dir.h"

namespace speaker_fixtures {

inline std::string dir() { return test_data_dir() + "/speaker"; }

inline std::string model_path() { return dir() + "/ecapa_tiny.gguf"; }

struct Reference {
    std::string clip;
    std::vector<float> pcm, fbank, embedding;
    int64_t frames = 0;
};

inline std::vector<float> floats(const pk::GgufReader& g, const char* name) {
    const pk::GgufTensor& t = g.tensor(name);
    const float* p = reinterpret_cast<const float*>(t.data);
    return std::vector<float>(p, p + t.n_elements);
}

inline Reference load(const std::string& clip) {
    const pk::GgufReader g = pk::GgufReader::open(dir() + "/ref_" + clip + ".gguf");
    Reference r;
    r.clip = clip;
    r.pcm = floats(g, "pcm");
    r.fbank = floats(g, "fbank");
    r.embedding = floats(g, "embedding");
    r.frames = g.tensor("fbank").ne[1];
    return r;
}

inline const std::vector<std::string>& clips() {
    static const std::vector<std::string> c = {"speech", "conversation"};
    return c;
}

}  // namespace speaker_fixtures
