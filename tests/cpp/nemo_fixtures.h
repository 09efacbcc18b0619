// Access to the NeMo reference fixtures in tests/data/nemo (made by tools/make_nemo_fixtures.py,
// described in docs/fixtures.md): one folder per model with model.gguf (our converter's output)
// and one ref_<clip>.gguf per clip holding NeMo's tensors (F32) and decoded results (metadata).
#pragma once

#include <dirent.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "model/gguf_reader.h"

namespace nemo_fixtures {

inline std::string data_dir() {
    const char* d = std::getenv("PARAKEET_TEST_DATA");
    return d ? d : "tests/data";
}

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
    std::string ref_path;   // .../ref_<clip>.gguf
};

// Every (model, clip) pair that has a reference file.
inline std::vector<Fixture> all() {
    std::vector<Fixture> out;
    const std::string root = data_dir() + "/nemo";
    for (const auto& model : list(root, "", "")) {
        if (model[0] == '.') continue;
        const std::string dir = root + "/" + model;
        for (const auto& ref : list(dir, "ref_", ".gguf")) out.push_back({dir, model, dir + "/" + ref});
    }
    return out;
}

// A reference tensor as a flat float vector (empty when absent).
inline std::vector<float> tensor(const pk::GgufReader& ref, const std::string& name) {
    const pk::GgufTensor* t = ref.find_tensor(name);
    if (!t) return {};
    const float* p = reinterpret_cast<const float*>(t->data);
    return std::vector<float>(p, p + t->n_elements);
}

}  // namespace nemo_fixtures
