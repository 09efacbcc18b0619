// Access to the NeMo reference fixtures in tests/data/nemo (made by tools/fixtures/make_nemo_fixtures.py,
// described in docs/fixtures.md): one folder per model with model.gguf (our converter's output)
// and one ref_<clip>.gguf per clip holding NeMo's tensors (F32) and decoded results (metadata),
// plus longref_<clip>_<setting>.gguf: NeMo's decoded results on a long clip assembled from the
// committed clips, under one attention setting.
#pragma once

#include <dirent.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "audio/wav_reader.h"
#include "gguf/gguf_reader.h"
#include "isa_levels.h"
#include "test_data_dir.h"
#include "model/model.h"

namespace nemo_fixtures {

inline std::string data_dir() { return test_data_dir(); }

inline std::vector<std::string> list(const std::string& dir, const std::string& prefix,
                                     const std::string& suffix) {
    std::vector<std::string> out;
    if (DIR* d = opendir(dir.c_str())) {
        while (dirent* e = readdir(d)) {
            const std::string n = e->d_name;
            if (n.size() >= prefix.size() + suffix.size() && n.compare(0, prefix.size(), prefix) == 0 &&
                n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0)
                out.push_back(n);
        }
        closedir(d);
    }
    std::sort(out.begin(), out.end());
    return out;
}

struct Fixture {
    std::string model_dir;  // tests/data/nemo/<model>
    std::string model_name;
    std::string ref_path;   // .../<prefix><clip...>.gguf
};

// Every reference file named <prefix>*.gguf in every model folder, by model then file name:
// "ref_" (one clip, the default), "longref_", "streamref_", "beamref_".
inline std::vector<Fixture> all(const std::string& prefix = "ref_") {
    std::vector<Fixture> out;
    const std::string root = data_dir() + "/nemo";
    for (const auto& model : list(root, "", "")) {
        if (model[0] == '.') continue;
        const std::string dir = root + "/" + model;
        for (const auto& ref : list(dir, prefix, ".gguf")) out.push_back({dir, model, dir + "/" + ref});
    }
    return out;
}

// Rebuilds a long clip from the recipe in its reference file, as
// tools/fixtures/nemo_fixtures/audio.py:assemble_long_clip does: for each segment i, the samples of
// ref.clip_recipe[i] (a clip in tests/data/audio) from ref.clip_first[i] to the end, each
// int16 / 32768 (the WAV reader's conversion) times ref.clip_gain[i] in float32, concatenated
// and cut to ref.n_samples. The gains are short binary fractions, so every product is exact
// and the result is bitwise the samples NeMo ran on.
inline std::vector<float> assemble_long_clip(const pk::GgufReader& ref) {
    const auto files = ref.get_string_array("ref.clip_recipe");
    const auto first = ref.get_i64_array("ref.clip_first");
    const auto gain = ref.get_f32_array("ref.clip_gain");
    const size_t n = static_cast<size_t>(ref.get_i64("ref.n_samples"));
    if (first.size() != files.size() || gain.size() != files.size())
        throw std::runtime_error("long clip recipe: ref.clip_recipe, ref.clip_first, ref.clip_gain differ in length");
    std::vector<float> out;
    out.reserve(n);
    for (size_t i = 0; i < files.size() && out.size() < n; ++i) {
        const pk::WavAudio wav = pk::read_wav_file(data_dir() + "/audio/" + files[i], 0);
        if (wav.sample_rate != 16000 || wav.channels != 1 || first[i] < 0 ||
            static_cast<size_t>(first[i]) > wav.samples.size())
            throw std::runtime_error("long clip recipe: bad segment " + files[i]);
        for (size_t k = static_cast<size_t>(first[i]); k < wav.samples.size() && out.size() < n; ++k)
            out.push_back(wav.samples[k] * gain[i]);
    }
    if (out.size() != n) throw std::runtime_error("long clip recipe: the segments give too few samples");
    return out;
}

// ref.clip_checksum of a long clip: sum over i of (bits of sample i) * (i + 1), modulo 2^64, as
// 16 hex digits; any changed bit changes it. audio.py:clip_checksum computes the same in numpy.
inline std::string clip_checksum(const std::vector<float>& samples) {
    uint64_t sum = 0;
    for (size_t i = 0; i < samples.size(); ++i) {
        uint32_t bits;
        std::memcpy(&bits, &samples[i], sizeof bits);
        sum += uint64_t(bits) * uint64_t(i + 1);
    }
    char hex[17];
    std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(sum));
    return hex;
}

// An int64 array of a reference file's metadata as ints (token ids, frames, durations).
inline std::vector<int> ints(const pk::GgufReader& ref, const std::string& key) {
    std::vector<int> out;
    for (int64_t v : ref.get_i64_array(key)) out.push_back(static_cast<int>(v));
    return out;
}

// What the decoder tests take from a fixture model without loading its weights as a Model:
// the file (for the decoders' own loaders), its config, tokenizer and transcript builder.
struct ModelParts {
    pk::GgufReader gguf;
    pk::ModelConfig cfg;
    pk::Tokenizer tokenizer;
    pk::TranscriptBuilder builder;

    explicit ModelParts(const std::string& path)
        : gguf(pk::GgufReader::open(path)),
          cfg(pk::read_model_config(gguf)),
          tokenizer(cfg.pieces),
          builder(tokenizer, static_cast<double>(cfg.pre.hop_length) / cfg.pre.sample_rate,
                  cfg.enc.subsampling_factor) {}
};

// A reference tensor as a flat float vector (empty when absent).
inline std::vector<float> tensor(const pk::GgufReader& ref, const std::string& name) {
    const pk::GgufTensor* t = ref.find_tensor(name);
    if (!t) return {};
    const float* p = reinterpret_cast<const float*>(t->data);
    return std::vector<float>(p, p + t->n_elements);
}

// The model of a fixture folder (tests/data/nemo/<model>/model.gguf) at ISA level `isa`, loaded
// once per test program. Not thread-safe: call it from the test's main thread.
inline pk::Model& cached_model(const std::string& model_dir, pk::IsaLevel isa) {
    static std::map<std::pair<std::string, pk::IsaLevel>, std::unique_ptr<pk::Model>> cache;
    auto& m = cache[{model_dir, isa}];
    if (!m) m = pk::Model::load(model_dir + "/model.gguf", isa_test::load_options_at(isa));
    return *m;
}

// The 16 kHz samples NeMo ran on for a ref_<clip>.gguf: its "audio" tensor when it has one (a
// clip NeMo resampled or mixed down), else the committed WAV file.
inline std::vector<float> clip_samples(const pk::GgufReader& ref) {
    std::vector<float> audio = tensor(ref, "audio");
    if (!audio.empty()) return audio;
    std::string file = ref.get_string("ref.clip_file");
    if (file.find('/') == std::string::npos) file = data_dir() + "/audio/" + file;
    return pk::read_wav_file(file, 0).samples;
}

}  // namespace nemo_fixtures
