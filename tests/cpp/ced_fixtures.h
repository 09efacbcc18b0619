// The CED fixtures of tests/data/ced (tools/fixtures/make_ced_fixtures.py): a small seeded CED
// in our converter's GGUF, three 16-bit clips, and the PyTorch/torchaudio reference dB mel and
// scores of each.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "nemo_fixtures.h"

namespace ced_fixtures {

// 2.5 s (251 frames: chunks of 96, 96, 59), 1.99 s (200: 96, 96 and an 8-frame tail dropped),
// 0.5 s (51 frames, one chunk).
inline const std::vector<std::string>& clips() {
    static const std::vector<std::string> names = {"long", "tail", "short"};
    return names;
}

inline std::string path(const std::string& file) { return nemo_fixtures::data_dir() + "/ced/" + file; }
inline std::string model_path() { return path("ced-test.gguf"); }

inline std::vector<float> samples(const std::string& clip) {
    return pk::read_wav_file(path("clip_" + clip + ".wav"), 0).samples;
}

// A raw little-endian float32 file ("" when it cannot be read).
inline std::vector<float> floats(const std::string& file) {
    std::vector<float> out;
    if (FILE* f = std::fopen(path(file).c_str(), "rb")) {
        float v;
        while (std::fread(&v, sizeof v, 1, f) == 1) out.push_back(v);
        std::fclose(f);
    }
    return out;
}

}  // namespace ced_fixtures
