// Batched cache-aware streaming (pk::CacheAwareBatch): per-stream step cost against the batch
// size. For each batch size B, B streams of the model are fed noise (random weights: the
// content does not matter) one chunk of audio per round, in lockstep; each round is one
// CacheAwareBatch run, timed (wall and process CPU time) from the streams' audio being taken
// to their updates being made. The first and the last rounds are left out; a figure is the
// median over rounds. B = 1 also runs the stream's own feed() (the path a lone stream takes
// today) for reference. Prints the CPU, the ISA level (PARAKEET_CPU lowers it) and a table;
// driven by bench/bench_stream_batch.py.
//
//   bench_stream_batch MODEL.gguf [--batches 1,2,4,8,16,32] [--seconds 6] [--threads 1]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "bench_timing.h"
#include "capi/environment.h"
#include "model/model.h"
#include "model/stream/cache_aware_batch.h"
#include "model/stream/cache_aware_stream.h"
#include "runtime/backend.h"
#include "runtime/cpu_features.h"

namespace {

struct Args {
    std::string model;
    std::vector<int> batches{1, 2, 4, 8, 16, 32};
    double seconds = 6.0;
    int threads = 1;
    int left = -1, right = -1;  // --context L,R (one of the model's); unset: its first
};

bool parse(int argc, char** argv, Args& a) {
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (!std::strcmp(argv[i], "--batches") && has_value) {
            a.batches.clear();
            for (char* s = argv[++i]; *s != '\0';) {
                char* end = nullptr;
                const long b = std::strtol(s, &end, 10);
                if (end == s || b < 1) return false;
                a.batches.push_back(static_cast<int>(b));
                s = *end == ',' ? end + 1 : end;
            }
        } else if (!std::strcmp(argv[i], "--seconds") && has_value) {
            a.seconds = std::atof(argv[++i]);
        } else if (!std::strcmp(argv[i], "--context") && has_value) {
            if (std::sscanf(argv[++i], "%d,%d", &a.left, &a.right) != 2 || a.left < 0 || a.right < 0) return false;
        } else if (!std::strcmp(argv[i], "--threads") && has_value) {
            a.threads = std::atoi(argv[++i]);
        } else if (argv[i][0] != '-' && a.model.empty()) {
            a.model = argv[i];
        } else {
            return false;
        }
    }
    return !a.model.empty() && !a.batches.empty() && a.seconds > 0.0 && a.threads >= 1;
}

std::string cpu_model() {
    std::ifstream f("/proc/cpuinfo");
    for (std::string line; std::getline(f, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown CPU";
}

std::vector<float> noise(int64_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 0.1f);
    std::vector<float> v(static_cast<size_t>(n));
    for (float& x : v) x = d(rng);
    return v;
}

struct Timing {
    double wall_ms = 0.0, cpu_ms = 0.0;  // medians per round
};

// B streams fed `chunk` samples a round for `rounds` rounds; `own_feed` runs B = 1 through feed().
Timing run(const pk::Model& model, const pk::AttContext& context, int B, int64_t chunk, int rounds, bool own_feed) {
    std::vector<std::unique_ptr<pk::CacheAwareStream>> streams;
    std::vector<pk::CacheAwareStream*> all;
    for (int b = 0; b < B; ++b) {
        streams.push_back(std::make_unique<pk::CacheAwareStream>(model, context, pk::DecoderChoice::Transducer));
        all.push_back(streams.back().get());
    }
    const pk::CacheAwareBatch batch(all);
    std::vector<double> wall, cpu;
    for (int r = 0; r < rounds; ++r) {
        std::vector<std::vector<float>> audio;
        for (int b = 0; b < B; ++b) audio.push_back(noise(chunk, static_cast<uint32_t>(r * 1000 + b)));
        const double c0 = bench::cpu_seconds();
        const auto t0 = bench::Clock::now();
        if (own_feed) {
            streams[0]->feed(audio[0].data(), chunk);
        } else {
            for (int b = 0; b < B; ++b) streams[static_cast<size_t>(b)]->take_audio(audio[b].data(), chunk);
            {
                const pk::BackendLease lease = model.lease_backend();
                batch.run(lease.backend());
            }
            for (auto& s : streams) s->take_update();
        }
        if (r > 0 && r + 1 < rounds) {
            wall.push_back(bench::ms_since(t0));
            cpu.push_back(1e3 * (bench::cpu_seconds() - c0));
        }
    }
    return {bench::median_of(wall), bench::median_of(cpu)};
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(stderr, "usage: %s MODEL.gguf [--batches 1,2,4,8] [--seconds S] [--threads N] [--context L,R]\n", argv[0]);
        return 2;
    }
    try {
        pk::LoadOptions options = pk::capi::load_options_from_environment();
        const auto model = pk::Model::load(a.model, options);
        {
            pk::Backend& b = pk::default_backend();
            std::lock_guard<std::mutex> lock(b.mutex());
            b.set_threads(a.threads);
        }
        const pk::EncoderConfig& enc = model->config().enc;
        if (!enc.cache_aware()) throw std::runtime_error(a.model + " is not a cache-aware streaming model");
        pk::AttContext context = enc.att_contexts.at(0);
        if (a.left >= 0) {
            context = {a.left, a.right};
            if (std::find(enc.att_contexts.begin(), enc.att_contexts.end(), context) == enc.att_contexts.end())
                throw std::runtime_error("the model has no attention context [" + std::to_string(a.left) + ", " +
                                         std::to_string(a.right) + "]");
        }
        const pk::CacheAwareSchedule schedule = pk::CacheAwareSchedule::of(context, enc.subsampling_factor);
        const int64_t hop = model->config().pre.hop_length;
        const int64_t chunk = schedule.chunk * hop;  // samples of one chunk
        const double chunk_ms = 1e3 * static_cast<double>(chunk) / model->config().pre.sample_rate;
        const int rounds = std::max(3, static_cast<int>(a.seconds * 1e3 / chunk_ms));
        std::printf("CPU: %s; ISA level %s; %d thread(s); context [%d, %d]: %.0f ms chunks; %d rounds\n",
                    cpu_model().c_str(), pk::isa_level_name(options.isa.value_or(pk::cpu_features().detected)),
                    a.threads, context.left, context.right, chunk_ms, rounds);
        run(*model, context, 1, chunk, 3, true);  // warm-up
        const Timing alone = run(*model, context, 1, chunk, rounds, true);
        std::printf("%-14s %12s %12s %16s %16s %10s\n", "batch", "wall ms", "cpu ms", "cpu ms/stream", "wall ms/stream",
                    "speed-up");
        std::printf("%-14s %12.2f %12.2f %16.2f %16.2f %10s\n", "1 (feed)", alone.wall_ms, alone.cpu_ms, alone.cpu_ms,
                    alone.wall_ms, "1.00");
        for (const int B : a.batches) {
            const Timing t = run(*model, context, B, chunk, rounds, false);
            std::printf("%-14d %12.2f %12.2f %16.2f %16.2f %10.2f\n", B, t.wall_ms, t.cpu_ms, t.cpu_ms / B,
                        t.wall_ms / B, alone.cpu_ms / (t.cpu_ms / B));
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_stream_batch: %s\n", e.what());
        return 1;
    }
    return 0;
}
