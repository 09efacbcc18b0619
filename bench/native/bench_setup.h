// What the native benchmarks that time batches share: the CPU's name for their header line,
// noise clips (random weights: the content does not matter) and their common options.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

namespace bench {

inline std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

inline std::vector<float> noise(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 0.1f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
}

// "1,4,16" into `out` (each at least 1); false for anything else.
inline bool parse_batches(const char* s, std::vector<int>& out) {
    out.clear();
    while (*s != '\0') {
        char* end = nullptr;
        const long b = std::strtol(s, &end, 10);
        if (end == s || b < 1 || (*end != ',' && *end != '\0')) return false;
        out.push_back(static_cast<int>(b));
        s = *end == ',' ? end + 1 : end;
    }
    return !out.empty();
}

// The options every batch benchmark takes: MODEL.gguf [--batches 1,4,16] [--seconds S] [--threads N].
struct BatchArgs {
    std::string model;
    std::vector<int> batches;
    double seconds;
    int threads = 1;

    // Whether the options read are usable.
    bool valid() const { return !model.empty() && !batches.empty() && seconds > 0.0 && threads >= 1; }
};

// Takes argv[i] (and its value, advancing i) into `a` when it is one of BatchArgs' options;
// false for anything else. A bad --batches list leaves it empty (BatchArgs::valid).
inline bool take_batch_arg(int argc, char** argv, int& i, BatchArgs& a) {
    const bool has_value = i + 1 < argc;
    if (!std::strcmp(argv[i], "--batches") && has_value) {
        if (!parse_batches(argv[++i], a.batches)) a.batches.clear();
    } else if (!std::strcmp(argv[i], "--seconds") && has_value) {
        a.seconds = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--threads") && has_value) {
        a.threads = std::atoi(argv[++i]);
    } else if (argv[i][0] != '-' && a.model.empty()) {
        a.model = argv[i];
    } else {
        return false;
    }
    return true;
}

}  // namespace bench
