// Batched live streams (pk::run_stream_batch): per-stream step cost against the batch size, for
// the steps of a cache-aware model (CacheAwareBatch) or the buffered windows of an offline one
// (ChunkedBatch, --window L,C,R seconds). For each batch size B, B streams of the model are fed
// noise (random weights: the content does not matter) one chunk of audio per round, in
// lockstep; each round is one run_stream_batch, timed (wall and process CPU time) from the
// streams' audio being taken to their updates being made. The rounds before the streams reach
// their steady state are left out (a cache-aware stream's first step; a buffered stream's
// windows until they hold L + C + R seconds); a figure is the median over the rest. The
// speed-up is a lone stream's step (B = 1, which is what its own feed() runs) against a
// stream's share of a batch. Prints the CPU, the ISA level (PARAKEET_CPU lowers it) and a
// table; driven by bench/bench_stream_batch.py.
//
//   bench_stream_batch MODEL.gguf [--batches 1,2,4,8,16,32] [--seconds 6] [--threads 1]
//                      [--window 10,2,2] [--context L,R]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench_setup.h"
#include "bench_timing.h"
#include "capi/environment.h"
#include "model/model.h"
#include "model/stream/cache_aware_stream.h"
#include "model/stream/chunked_stream.h"
#include "model/stream/stream_batch.h"
#include "runtime/backend.h"
#include "runtime/cpu_features.h"

namespace {

struct Args : bench::BatchArgs {
    Args() : bench::BatchArgs{{}, {1, 2, 4, 8, 16, 32}, 6.0} {}
    pk::StreamSettings window;  // an offline model's buffered window (default 10-2-2)
    int left = -1, right = -1;  // a cache-aware model's --context L,R (one of its own); unset: its first
};

// "L,C,R" seconds into `w`.
bool parse_window(const char* s, pk::StreamSettings& w) {
    return std::sscanf(s, "%lf,%lf,%lf", &w.left_sec, &w.chunk_sec, &w.right_sec) == 3;
}

bool parse(int argc, char** argv, Args& a) {
    for (int i = 1; i < argc; ++i) {
        const bool has_value = i + 1 < argc;
        if (bench::take_batch_arg(argc, argv, i, a)) continue;
        if (!std::strcmp(argv[i], "--context") && has_value) {
            if (std::sscanf(argv[++i], "%d,%d", &a.left, &a.right) != 2 || a.left < 0 || a.right < 0) return false;
        } else if (!std::strcmp(argv[i], "--window") && has_value) {
            if (!parse_window(argv[++i], a.window)) return false;
        } else {
            return false;
        }
    }
    return a.valid();
}

struct Timing {
    double wall_ms = 0.0, cpu_ms = 0.0;  // medians per round
};

// How the model streams: its chunk, the rounds before its streams' steady state, and a stream.
struct StreamKind {
    std::string how;    // "context [L, R]" or "buffered L-C-R s", for the header line
    int64_t chunk = 0;  // samples fed per round
    int warm_rounds = 0;
    std::function<std::unique_ptr<pk::LiveStream>()> make;
};

// A cache-aware model's attention context: [left, right] when given (one of the model's), else its first.
pk::AttContext context_of(const pk::EncoderConfig& enc, int left, int right) {
    if (left < 0) return enc.att_contexts.at(0);
    const pk::AttContext context{left, right};
    if (std::find(enc.att_contexts.begin(), enc.att_contexts.end(), context) == enc.att_contexts.end())
        throw std::runtime_error("the model has no attention context [" + std::to_string(left) + ", " +
                                 std::to_string(right) + "]");
    return context;
}

StreamKind kind_of(const pk::Model& model, const Args& a) {
    const pk::ModelConfig& cfg = model.config();
    const pk::StreamSettings& window = a.window;
    StreamKind k;
    if (cfg.enc.cache_aware()) {
        const pk::AttContext context = context_of(cfg.enc, a.left, a.right);
        k.how = "context [" + std::to_string(context.left) + ", " + std::to_string(context.right) + "]";
        k.chunk = pk::CacheAwareSchedule::of(context, cfg.enc.subsampling_factor).chunk * cfg.pre.hop_length;
        k.warm_rounds = 1;  // the first step has no pre-encode cache
        k.make = [&model, context] {
            return std::make_unique<pk::CacheAwareStream>(model, context, pk::DecoderChoice::Transducer);
        };
    } else {
        const pk::StreamContext ctx = pk::stream_context(window, cfg.pre, cfg.enc.subsampling_factor);
        char how[96];
        std::snprintf(how, sizeof how, "buffered %g-%g-%g s", window.left_sec, window.chunk_sec, window.right_sec);
        k.how = how;
        k.chunk = ctx.chunk;
        // The first window runs once audio past chunk + right has come; the windows hold
        // L + C + R seconds from the round after that.
        k.warm_rounds = static_cast<int>((ctx.window() + ctx.chunk - 1) / ctx.chunk) + 1;
        k.make = [&model, window] { return std::make_unique<pk::ChunkedStream>(model, window); };
    }
    return k;
}

// B streams fed a chunk a round for kind.warm_rounds + `rounds` rounds; the last `rounds` timed.
Timing run(const pk::Model& model, const StreamKind& kind, int B, int rounds) {
    std::vector<std::unique_ptr<pk::LiveStream>> streams;
    std::vector<pk::LiveStream*> all;
    for (int b = 0; b < B; ++b) {
        streams.push_back(kind.make());
        all.push_back(streams.back().get());
    }
    std::vector<double> wall, cpu;
    for (int r = 0; r < kind.warm_rounds + rounds; ++r) {
        std::vector<std::vector<float>> audio;
        for (int b = 0; b < B; ++b) audio.push_back(bench::noise(kind.chunk, static_cast<uint32_t>(r * 1000 + b)));
        const double c0 = bench::cpu_seconds();
        const auto t0 = bench::Clock::now();
        for (int b = 0; b < B; ++b) streams[static_cast<size_t>(b)]->take_audio(audio[b].data(), kind.chunk);
        {
            const pk::BackendLease lease = model.lease_backend();
            pk::run_stream_batch(all, lease.backend());
        }
        for (auto& s : streams) s->take_update();
        if (r >= kind.warm_rounds) {
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
        std::fprintf(stderr, "usage: %s MODEL.gguf [--batches 1,2,4,8] [--seconds S] [--threads N] [--window L,C,R] "
                     "[--context L,R]\n", argv[0]);
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
        const StreamKind kind = kind_of(*model, a);
        const double chunk_ms = 1e3 * static_cast<double>(kind.chunk) / model->config().pre.sample_rate;
        const int rounds = std::max(3, static_cast<int>(a.seconds * 1e3 / chunk_ms));
        std::printf("CPU: %s; ISA level %s; %d thread(s); %s: %.0f ms chunks; %d timed rounds\n",
                    bench::cpu_model().c_str(), pk::isa_level_name(options.isa.value_or(pk::cpu_features().detected)),
                    a.threads, kind.how.c_str(), chunk_ms, rounds);
        run(*model, kind, 1, 1);  // warm-up
        const Timing alone = run(*model, kind, 1, rounds);
        std::printf("%-8s %12s %12s %16s %16s %10s\n", "batch", "wall ms", "cpu ms", "cpu ms/stream", "wall ms/stream",
                    "speed-up");
        for (const int B : a.batches) {
            const Timing t = B == 1 ? alone : run(*model, kind, B, rounds);
            std::printf("%-8d %12.2f %12.2f %16.2f %16.2f %10.2f\n", B, t.wall_ms, t.cpu_ms, t.cpu_ms / B,
                        t.wall_ms / B, alone.cpu_ms / (t.cpu_ms / B));
            std::fflush(stdout);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_stream_batch: %s\n", e.what());
        return 1;
    }
    return 0;
}
