// Shared by the batched encoder tests (test_stream_batch_encoder, test_offline_batch_encoder):
// fixture models loaded once per file and ISA level, random mel features, and test names for
// model-file parameters.
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "isa_levels.h"
#include "model/model.h"
#include "nemo_fixtures.h"

namespace batch_test {

// tests/data/nemo/<file> at `isa`, loaded once.
inline pk::Model& model_file(const std::string& file, pk::IsaLevel isa) {
    static std::map<std::pair<std::string, pk::IsaLevel>, std::unique_ptr<pk::Model>> cache;
    auto& m = cache[{file, isa}];
    if (!m) m = pk::Model::load(nemo_fixtures::data_dir() + "/nemo/" + file, isa_test::load_options_at(isa));
    return *m;
}

inline std::vector<float> random_mel(int64_t frames, int64_t n_mels, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> dist(0.0f, 2.0f);
    std::vector<float> v(static_cast<size_t>(frames * n_mels));
    for (float& f : v) f = dist(rng);
    return v;
}

// "model-q8_0.gguf" -> "model_q8_0".
inline std::string file_param_name(const testing::TestParamInfo<std::string>& info) {
    std::string name = info.param.substr(0, info.param.find('.'));
    for (char& c : name)
        if (c == '-') c = '_';
    return name;
}

}  // namespace batch_test

// The model files every batched encoder test runs on.
#define INSTANTIATE_MODEL_FILES(Suite)                                                                      \
    INSTANTIATE_TEST_SUITE_P(Files, Suite, ::testing::Values("model.gguf", "model-f16.gguf", "model-q8_0.gguf"), \
                             batch_test::file_param_name)
