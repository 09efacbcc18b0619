// Where the time of a batched offline pass goes, stage by stage: what a batch of short uploads
// costs per request (pk::OfflineBatch, issue 32).
//
//   bench_batch_stages MODEL.gguf [--seconds 3] [--batches 1,16] [--threads 1] [--reps 5]
//
// For each batch size B, B noise clips of --seconds (random weights: the content does not
// matter) run the steps OfflineBatch::run takes on one backend: the front end per request
// (prepare_audio, log-mel), FastConformerEncoder::forward_batch on all of them, whose
// BatchStageMark names each stage as it ends (model/encoder/batch_rows.h), and the batched
// greedy transducer decode. A stage's time is the process CPU time since the mark before it
// (steadier than wall time on a shared machine; with 2 threads it counts a waiting thread's
// spinning too); stages of the same name (every layer's feed-forwards, ...) add up. After one
// untimed pass, each figure is the median over --reps passes, divided by B: milliseconds of
// CPU per request. The wall time per request is printed too.
// Prints the CPU, the ISA level (PARAKEET_CPU lowers it) and a table.
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "bench_setup.h"
#include "bench_timing.h"
#include "capi/environment.h"
#include "model/model.h"
#include "runtime/backend.h"
#include "runtime/cpu_features.h"

namespace {

struct Args : bench::BatchArgs {
    Args() : bench::BatchArgs{{}, {1, 16}, 3.0} {}
    int reps = 5;
};

bool parse(int argc, char** argv, Args& a) {
    for (int i = 1; i < argc; ++i) {
        if (bench::take_batch_arg(argc, argv, i, a)) continue;
        if (std::strcmp(argv[i], "--reps") != 0 || i + 1 >= argc) return false;
        a.reps = std::atoi(argv[++i]);
    }
    return a.valid() && a.reps >= 1;
}

// Milliseconds per stage of one pass, in the order the stages first ended.
struct PassTimes {
    std::vector<std::string> order;
    std::map<std::string, double> ms;
    double wall_ms = 0.0;

    void add(const std::string& stage, double v) {
        if (ms.find(stage) == ms.end()) order.push_back(stage);
        ms[stage] += v;
    }
};

// One batched pass of `clips` on `backend`, as OfflineBatch::run makes it, timed stage by stage.
PassTimes run_pass(const pk::Model& model, pk::Backend& backend, const std::vector<std::vector<float>>& clips,
                   int sample_rate) {
    PassTimes t;
    const auto t0 = bench::Clock::now();
    double last = bench::cpu_seconds();
    const auto end_stage = [&](const char* stage) {
        const double now = bench::cpu_seconds();
        t.add(stage, 1e3 * (now - last));
        last = now;
    };
    pk::Arena& arena = backend.arena();
    arena.reset();
    const pk::FastConformerEncoder& enc = model.encoder();
    std::vector<pk::EncoderUtterance> utterances;
    int64_t rows = 0;
    for (const std::vector<float>& clip : clips) {
        int64_t n = 0;
        const float* audio =
            model.prepare_audio(backend, clip.data(), static_cast<int64_t>(clip.size()), sample_rate, &n);
        const pk::MelFeatures mel = model.compute_mel(backend, audio, n);
        utterances.push_back({mel.data, mel.valid, model.resolve_attention({}, enc.output_frames(mel.valid))});
        rows += enc.output_frames(mel.valid);
    }
    end_stage("front end (resample, log-mel)");
    float* out = arena.alloc_array<float>(static_cast<size_t>(rows * enc.d_model()));
    enc.forward_batch(backend.team(), arena, utterances, out, end_stage);
    std::vector<pk::TransducerCarry> carries(utterances.size());
    std::vector<pk::ChunkDecode> searches;
    for (size_t i = 0; i < utterances.size(); ++i)
        searches.push_back({out + utterances[i].row * enc.d_model(), utterances[i].frames, &carries[i], {}});
    model.transducer()->decode_batch(backend.team(), arena, searches);
    end_stage("greedy decode (batched)");
    t.wall_ms = bench::ms_since(t0);
    return t;
}

}  // namespace

int main(int argc, char** argv) {
    Args a;
    if (!parse(argc, argv, a)) {
        std::fprintf(stderr, "usage: %s MODEL.gguf [--seconds 3] [--batches 1,16] [--threads 1] [--reps 5]\n",
                     argv[0]);
        return 2;
    }
    try {
        const pk::LoadOptions options = pk::capi::load_options_from_environment();
        const auto model = pk::Model::load(a.model, options);
        if (model->transducer() == nullptr) throw std::runtime_error("the model has no transducer head");
        const int rate = model->config().pre.sample_rate;
        pk::Backend backend(a.threads);
        std::lock_guard<std::mutex> lock(backend.mutex());
        std::printf("CPU: %s; ISA level %s; %d thread(s); %g s clips; median of %d passes; ms per request\n",
                    bench::cpu_model().c_str(), pk::isa_level_name(options.isa.value_or(pk::cpu_features().detected)),
                    a.threads, a.seconds, a.reps);
        std::vector<PassTimes> medians;  // per batch size: each stage's median per request
        for (const int B : a.batches) {
            std::vector<std::vector<float>> clips;
            for (int b = 0; b < B; ++b)
                clips.push_back(bench::noise(static_cast<int64_t>(a.seconds * rate), static_cast<uint32_t>(b)));
            run_pass(*model, backend, clips, rate);  // warm-up: the arena, the caches
            std::vector<PassTimes> passes;
            for (int r = 0; r < a.reps; ++r) passes.push_back(run_pass(*model, backend, clips, rate));
            PassTimes m;
            std::vector<double> totals, wall;
            for (const PassTimes& p : passes) {
                double total = 0.0;
                for (const auto& [stage, ms] : p.ms) total += ms;
                totals.push_back(total / B);
                wall.push_back(p.wall_ms / B);
            }
            for (const std::string& stage : passes[0].order) {
                std::vector<double> v;
                for (const PassTimes& p : passes) v.push_back(p.ms.at(stage) / B);
                m.add(stage, bench::median_of(v));
            }
            m.add("total", bench::median_of(totals));
            m.add("wall time", bench::median_of(wall));
            medians.push_back(m);
        }
        std::printf("%-34s", "stage");
        for (const int B : a.batches) std::printf(" %9s", ("B=" + std::to_string(B)).c_str());
        std::printf("\n");
        PassTimes all;  // every stage that any batch size had, in order
        for (const PassTimes& m : medians)
            for (const std::string& stage : m.order) all.add(stage, 0.0);
        for (const std::string& stage : all.order) {
            std::printf("%-34s", stage.c_str());
            for (const PassTimes& m : medians) {
                const auto it = m.ms.find(stage);
                std::printf(" %9.3f", it == m.ms.end() ? 0.0 : it->second);
            }
            std::printf("\n");
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_batch_stages: %s\n", e.what());
        return 1;
    }
    return 0;
}
