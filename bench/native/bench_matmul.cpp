// Times pk::kernels::matmul. Each argument TYPE:M:K:N:THREADS[:PATH] (TYPE = f32, f16, bf16, or
// a ggml block type: q8_0, q6_k, q5_k, q5_1, q5_0, q4_k, q4_1, q4_0; PATH = auto, gemm or matvec,
// the kernels::MatmulPath, auto by default) is
// run in the order given: one warm-up call, then calls until both --reps and --min-time are
// reached; one JSON object per line reports the median time, GFLOP/s (2 M N K / time) and
// the weight bytes streamed per second. Besides wall time it reports the process CPU time per
// call: on a busy machine that is the steadier measure of a single-threaded kernel (it does
// not count time the thread spent descheduled). "isa" is the kernel level that ran
// (PARAKEET_CPU lowers it). Driven by bench/bench_matmul.py.
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "kernels/matmul.h"
#include "runtime/arena.h"
#include "capi/environment.h"
#include "runtime/cpu_features.h"
#include "quant/ggml_blocks.h"
#include "runtime/thread_team.h"

namespace {

using pk::kernels::PackedWeights;
using pk::kernels::WeightType;

struct Config {
    std::string type;
    int64_t M, K, N;
    int threads;
    std::string path;
};

const std::map<std::string, pk::kernels::MatmulPath>& path_names() {
    static const std::map<std::string, pk::kernels::MatmulPath> names{
        {"auto", pk::kernels::MatmulPath::Auto},
        {"gemm", pk::kernels::MatmulPath::Gemm},
        {"matvec", pk::kernels::MatmulPath::Matvec}};
    return names;
}

// The stored type of each TYPE name (bf16 is made at load from F32).
const std::map<std::string, WeightType>& type_names() {
    static const std::map<std::string, WeightType> names{
        {"f32", WeightType::F32},   {"bf16", WeightType::F32},  {"f16", WeightType::F16},
        {"q8_0", WeightType::Q8_0}, {"q6_k", WeightType::Q6_K}, {"q5_k", WeightType::Q5_K},
        {"q5_1", WeightType::Q5_1}, {"q5_0", WeightType::Q5_0}, {"q4_k", WeightType::Q4_K},
        {"q4_1", WeightType::Q4_1}, {"q4_0", WeightType::Q4_0}};
    return names;
}

bool parse_config(const char* s, Config& c) {
    char type[16], path[16] = "auto";
    long long m, k, n;
    int t;
    const int fields = std::sscanf(s, "%15[^:]:%lld:%lld:%lld:%d:%15s", type, &m, &k, &n, &t, path);
    if (fields != 5 && fields != 6) return false;
    c = Config{type, m, k, n, t, path};
    return type_names().count(c.type) && path_names().count(c.path) && m >= 1 && k >= 1 && n >= 1 && t >= 1;
}

WeightType type_of(const std::string& s) { return type_names().at(s); }

// Random raw weights of the given type, as a GGUF file would hold them: uniform floats, encoded
// by the reference quantisers.
std::vector<uint8_t> random_weights(const Config& c, std::mt19937& rng) {
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> w(static_cast<size_t>(c.N * c.K));
    for (auto& v : w) v = 0.05f * dist(rng);
    const auto type = static_cast<pk::GgmlType>(type_of(c.type));
    std::vector<uint8_t> raw(pk::quant::row_bytes(type, c.K) * static_cast<size_t>(c.N));
    pk::quant::quantize_row(type, w.data(), c.N * c.K, raw.data());
    return raw;
}

using bench::cpu_seconds;
using bench::median_of;

}  // namespace

int main(int argc, char** argv) {
    int reps = 7;
    double min_time = 0.3;
    std::vector<Config> configs;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--reps") && i + 1 < argc) {
            reps = std::max(1, std::atoi(argv[++i]));
        } else if (!std::strcmp(argv[i], "--min-time") && i + 1 < argc) {
            min_time = std::atof(argv[++i]);
        } else {
            Config c;
            if (!parse_config(argv[i], c)) {
                std::fprintf(stderr,
                             "usage: %s [--reps N] [--min-time SECONDS] TYPE:M:K:N:THREADS[:PATH]...\n"
                             "  TYPE = f32 | f16 | bf16 (opt-in kernels, F32 weights rounded at\n"
                             "  packing; needs AVX512_BF16) | q8_0 q5_1 q5_0 q4_1 q4_0 (K %% 32 == 0)\n"
                             "  | q6_k q5_k q4_k (K %% 256 == 0); PATH = auto | gemm | matvec\n",
                             argv[0]);
                return 2;
            }
            configs.push_back(c);
        }
    }
    if (configs.empty()) {
        std::fprintf(stderr, "no configuration given (try f32:500:2048:2048:1)\n");
        return 2;
    }

    std::map<int, std::unique_ptr<pk::ThreadTeam>> teams;
    pk::Arena arena;
    std::mt19937 rng(1234);
    using Clock = std::chrono::steady_clock;
    for (const Config& c : configs) {
        if (c.K % pk::kernels::weight_block_values(type_of(c.type)) != 0) {
            std::fprintf(stderr, "%s needs K to be a multiple of %lld\n", c.type.c_str(),
                         static_cast<long long>(pk::kernels::weight_block_values(type_of(c.type))));
            return 2;
        }
        auto& team = teams[c.threads];
        if (!team) team = std::make_unique<pk::ThreadTeam>(c.threads);
        const std::vector<uint8_t> raw = random_weights(c, rng);
        // The level PARAKEET_CPU asks for, as the C ABI reads it (the CPU's highest by default).
        const pk::IsaLevel level = pk::capi::load_options_from_environment().isa.value_or(pk::cpu_features().detected);
        const PackedWeights w = c.type == "bf16"
                                    ? PackedWeights::to_bf16(WeightType::F32, raw.data(), c.N, c.K, level)
                                    : PackedWeights(type_of(c.type), raw.data(), c.N, c.K, level);
        std::vector<float> x(static_cast<size_t>(c.M * c.K)), y(static_cast<size_t>(c.M * c.N));
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        for (auto& v : x) v = dist(rng);

        const pk::kernels::MatmulPath path = path_names().at(c.path);
        pk::kernels::matmul(*team, arena, x.data(), c.M, c.K, w, nullptr, y.data(), -1, path);  // warm-up
        std::vector<double> wall, cpu;
        const auto start = Clock::now();
        while (static_cast<int>(wall.size()) < reps ||
               std::chrono::duration<double>(Clock::now() - start).count() < min_time) {
            const double c0 = cpu_seconds();
            const auto t0 = Clock::now();
            pk::kernels::matmul(*team, arena, x.data(), c.M, c.K, w, nullptr, y.data(), -1, path);
            wall.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
            cpu.push_back(cpu_seconds() - c0);
        }
        const double median = median_of(wall);
        const double cpu_median = median_of(cpu);
        const double flops = 2.0 * static_cast<double>(c.M) * c.N * c.K;
        std::printf(
            "{\"type\": \"%s\", \"path\": \"%s\", \"M\": %lld, \"K\": %lld, \"N\": %lld, \"threads\": %d, "
            "\"avx2\": %s, \"isa\": \"%s\", \"reps\": %zu, \"median_ms\": %.4f, \"min_ms\": %.4f, "
            "\"cpu_median_ms\": %.4f, \"gflops\": %.2f, \"gflops_per_cpu_second\": %.2f, "
            "\"weight_gbps\": %.2f, \"packed_bytes\": %zu}\n",
            c.type.c_str(), c.path.c_str(), static_cast<long long>(c.M), static_cast<long long>(c.K),
            static_cast<long long>(c.N), c.threads,
            pk::isa_includes(w.level(), pk::IsaLevel::Avx2) ? "true" : "false",
            pk::isa_level_name(w.level()), wall.size(),
            median * 1e3, *std::min_element(wall.begin(), wall.end()) * 1e3, cpu_median * 1e3,
            flops / median * 1e-9, flops / cpu_median * 1e-9,
            static_cast<double>(w.packed_bytes()) / median * 1e-9, w.packed_bytes());
        std::fflush(stdout);
    }
    return 0;
}
