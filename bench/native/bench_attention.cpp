// Times one layer's self-attention kernel (q, k, v and the positions already projected):
// the full pk::kernels::rel_pos_attention against the banded local_rel_pos_attention, for
// the d_model / heads of the 110M (512 / 8) and 0.6B (1024 / 8) models over a range of
// sequence lengths (encoder frames; 12.5 per second of audio) and team sizes. Used to choose
// where "auto" switches from full to local attention.
//
// Each case: one warm-up call, then timed calls until --reps are done or --max-seconds have
// passed (at least one); the median is reported. Full attention is skipped above --full-max-T
// (it is O(T^2)). Besides wall time it reports the process CPU time per call (median): on a
// busy machine that is the steadier measure, since it does not count time the threads spent
// descheduled. Prints a table, or one JSON object per case with --json.
//
//   bench_attention [--reps N] [--max-seconds S] [--json] [--d-model 512,1024] [--heads 8]
//                   [--T 125,375,...] [--threads 1,2] [--window 128,128] [--full-max-T 7500]
#include <algorithm>
#include <chrono>
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "capi/environment.h"
#include "kernels/attention_local_rel_pos.h"
#include "kernels/attention_rel_pos.h"
#include "kernels/kernel_table.h"
#include "runtime/arena.h"
#include "runtime/cpu_features.h"
#include "runtime/thread_team.h"

namespace {

std::vector<int64_t> parse_list(const char* s) {
    std::vector<int64_t> v;
    for (const char* c = s; *c;) {
        char* end = nullptr;
        v.push_back(std::strtoll(c, &end, 10));
        if (end == c) return {};
        c = *end == ',' ? end + 1 : end;
    }
    return v;
}

std::vector<float> random_vec(size_t n, std::mt19937& rng) {
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = d(rng);
    return v;
}

using bench::cpu_seconds;
using bench::median_of;

struct Timing {
    double median_ms;
    double cpu_median_ms;
    size_t reps;
};

Timing time_calls(const std::function<void()>& call, int reps, double max_seconds) {
    using Clock = std::chrono::steady_clock;
    call();  // warm-up: arena growth, page faults, caches
    std::vector<double> ms, cpu_ms;
    const auto start = Clock::now();
    while (static_cast<int>(ms.size()) < reps &&
           (ms.empty() || std::chrono::duration<double>(Clock::now() - start).count() < max_seconds)) {
        const double c0 = cpu_seconds();
        const auto t0 = Clock::now();
        call();
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
        cpu_ms.push_back((cpu_seconds() - c0) * 1e3);
    }
    return {median_of(ms), median_of(cpu_ms), ms.size()};
}

}  // namespace

int main(int argc, char** argv) {
    int reps = 5;
    double max_seconds = 10.0;
    bool json = false;
    std::vector<int64_t> d_models{512, 1024}, Ts{125, 375, 750, 1500, 3000, 7500, 45000}, threads{1, 2},
        window{128, 128};
    int64_t heads = 8, full_max_T = 7500;
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--json")) json = true;
        else if (!std::strcmp(argv[i], "--reps") && has_value) reps = std::max(1, std::atoi(argv[++i]));
        else if (!std::strcmp(argv[i], "--max-seconds") && has_value) max_seconds = std::atof(argv[++i]);
        else if (!std::strcmp(argv[i], "--d-model") && has_value) d_models = parse_list(argv[++i]);
        else if (!std::strcmp(argv[i], "--heads") && has_value) heads = std::atoll(argv[++i]);
        else if (!std::strcmp(argv[i], "--T") && has_value) Ts = parse_list(argv[++i]);
        else if (!std::strcmp(argv[i], "--threads") && has_value) threads = parse_list(argv[++i]);
        else if (!std::strcmp(argv[i], "--window") && has_value) window = parse_list(argv[++i]);
        else if (!std::strcmp(argv[i], "--full-max-T") && has_value) full_max_T = std::atoll(argv[++i]);
        else {
            std::fprintf(stderr, "unknown or incomplete argument %s (see the header of bench_attention.cpp)\n", argv[i]);
            return 2;
        }
    }
    const bool valid = !d_models.empty() && !Ts.empty() && !threads.empty() && window.size() == 2 && heads >= 1 &&
                       window[0] >= 0 && window[1] >= 0 && std::max(window[0], window[1]) > 0 &&
                       std::all_of(d_models.begin(), d_models.end(), [&](int64_t d) { return d > 0 && d % heads == 0; }) &&
                       std::all_of(Ts.begin(), Ts.end(), [](int64_t t) { return t > 0; }) &&
                       std::all_of(threads.begin(), threads.end(), [](int64_t t) { return t > 0; });
    if (!valid) {
        std::fprintf(stderr, "invalid lists (d_model a multiple of heads, T and threads > 0, window L,R)\n");
        return 2;
    }
    const int64_t L = window[0], R = window[1];
    // The level PARAKEET_CPU asks for, as the C ABI reads it (the CPU's highest by default).
    const pk::kernels::KernelTable& kt = pk::kernels::kernel_table(
        pk::capi::load_options_from_environment().isa.value_or(pk::cpu_features().detected));

    if (!json) {
        std::printf("# one layer's attention, median ms (%s level); local window [%lld, %lld]\n",
                    pk::isa_level_name(kt.level), static_cast<long long>(L),
                    static_cast<long long>(R));
        std::printf("| d_model | heads | T | threads | full ms | local ms | local / full | full cpu ms | local cpu ms | full cpu ns/pair | local cpu ns/pair |\n");
        std::printf("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    }
    std::map<int64_t, std::unique_ptr<pk::ThreadTeam>> teams;
    pk::Arena arena;
    std::mt19937 rng(1234);
    for (const int64_t d : d_models) {
        const int64_t dk = d / heads;
        for (const int64_t T : Ts) {
            const size_t n = static_cast<size_t>(T * d);
            const std::vector<float> q = random_vec(n, rng), k = random_vec(n, rng), v = random_vec(n, rng);
            const std::vector<float> bu = random_vec(static_cast<size_t>(d), rng), bv = random_vec(static_cast<size_t>(d), rng);
            const std::vector<float> p_local = random_vec(static_cast<size_t>((L + R + 1) * d), rng);
            const bool run_full = T <= full_max_T;
            const std::vector<float> p_full = run_full ? random_vec(static_cast<size_t>((2 * T - 1) * d), rng)
                                                       : std::vector<float>();
            std::vector<float> out(n);
            for (const int64_t nt : threads) {
                auto& team = teams[nt];
                if (!team) team = std::make_unique<pk::ThreadTeam>(static_cast<int>(nt));
                Timing full{0, 0, 0};
                if (run_full)
                    full = time_calls([&] {
                        pk::kernels::rel_pos_attention(kt, *team, arena, q.data(), k.data(), v.data(), p_full.data(),
                                                       bu.data(), bv.data(), T, heads, dk, out.data());
                    }, reps, max_seconds);
                const Timing local = time_calls([&] {
                    pk::kernels::local_rel_pos_attention(kt, *team, arena, q.data(), k.data(), v.data(), p_local.data(),
                                                         bu.data(), bv.data(), T, 0, T, heads, dk, L, R, out.data());
                }, reps, max_seconds);
                // Key frames each query attends to (the window clipped at the sequence ends).
                double pairs = 0;
                for (int64_t i = 0; i < T; ++i) pairs += static_cast<double>(std::min(T, i + R + 1) - std::max<int64_t>(0, i - L));
                // CPU time per (query, key, head) pair: the two kernels' efficiencies side by side.
                const double local_ns_per_pair = local.cpu_median_ms * 1e6 / (pairs * heads);
                const double full_ns_per_pair = full.cpu_median_ms * 1e6 / (static_cast<double>(T) * T * heads);
                if (json) {
                    std::printf("{\"d_model\": %lld, \"heads\": %lld, \"T\": %lld, \"threads\": %lld, \"left\": %lld, "
                                "\"right\": %lld, \"level\": \"%s\", \"full_ms\": %s, \"full_cpu_ms\": %s, \"full_reps\": %zu, "
                                "\"local_ms\": %.4f, \"local_cpu_ms\": %.4f, \"local_reps\": %zu, "
                                "\"full_cpu_ns_per_pair\": %s, \"local_cpu_ns_per_pair\": %.4f}\n",
                                static_cast<long long>(d), static_cast<long long>(heads), static_cast<long long>(T),
                                static_cast<long long>(nt), static_cast<long long>(L), static_cast<long long>(R),
                                pk::isa_level_name(kt.level),
                                run_full ? std::to_string(full.median_ms).c_str() : "null",
                                run_full ? std::to_string(full.cpu_median_ms).c_str() : "null", full.reps,
                                local.median_ms, local.cpu_median_ms, local.reps,
                                run_full ? std::to_string(full_ns_per_pair).c_str() : "null", local_ns_per_pair);
                } else {
                    char full_ms[32] = "-", ratio[32] = "-", full_cpu[32] = "-", full_ns[32] = "-";
                    if (run_full) {
                        std::snprintf(full_ms, sizeof full_ms, "%.3f", full.median_ms);
                        std::snprintf(full_cpu, sizeof full_cpu, "%.3f", full.cpu_median_ms);
                        std::snprintf(ratio, sizeof ratio, "%.3f", local.median_ms / full.median_ms);
                        std::snprintf(full_ns, sizeof full_ns, "%.3f", full_ns_per_pair);
                    }
                    std::printf("| %lld | %lld | %lld | %lld | %s | %.3f | %s | %s | %.3f | %s | %.3f |\n",
                                static_cast<long long>(d), static_cast<long long>(heads), static_cast<long long>(T),
                                static_cast<long long>(nt), full_ms, local.median_ms, ratio, full_cpu,
                                local.cpu_median_ms, full_ns, local_ns_per_pair);
                }
                std::fflush(stdout);
            }
        }
    }
    return 0;
}
