// Per-stage timing of one transcription: where a request's time goes.
//
//   bench_stages MODEL.gguf CLIP.wav [threads=2] [reps=7]
//
// Runs the pipeline stage by stage on one backend, as Model::transcribe_on does (prepare
// audio, log-mel, subsampling, each conformer layer, greedy decoding, transcript), after one
// untimed warm-up, and prints the median milliseconds of each stage over `reps` runs as JSON.
// Layer times come from the encoder's stage observer, which fires after the subsampling and
// after every layer; the per-layer figure is the median of all layers of all runs.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "bench_model_clip.h"
#include "bench_timing.h"
#include "model/model.h"
#include "runtime/backend.h"

using bench::Clock;
using bench::ms_since;

int main(int argc, char** argv) {
    bench::ModelClipArgs args;
    if (!bench::parse_model_clip_args(argc, argv, args)) return 2;
    const int n_threads = args.threads;
    const int reps = args.reps;
    try {
        const auto t_load = Clock::now();
        const auto model = pk::Model::load(args.model);
        const double load_ms = ms_since(t_load);
        const pk::WavAudio wav = pk::read_wav_file(args.clip, 0);
        const double audio_s = static_cast<double>(wav.samples.size()) / wav.sample_rate;
        const pk::TransducerDecoder* dec = &bench::transducer_of(*model);

        pk::Backend backend(n_threads);
        std::lock_guard<std::mutex> lock(backend.mutex());
        std::map<std::string, std::vector<double>> ms;
        std::vector<double> layer_ms;
        size_t n_tokens = 0;
        int64_t enc_frames = 0;
        for (int rep = -1; rep < reps; ++rep) {  // rep -1: warm-up (arena, caches)
            const bool timed = rep >= 0;
            auto note = [&](const char* stage, double v) {
                if (timed) ms[stage].push_back(v);
            };
            const auto t_total = Clock::now();
            backend.arena().reset();
            auto t = Clock::now();
            int64_t n16 = 0;
            const float* audio = model->prepare_audio(backend, wav.samples.data(),
                                                      static_cast<int64_t>(wav.samples.size()),
                                                      wav.sample_rate, &n16);
            note("prepare_audio", ms_since(t));
            t = Clock::now();
            const pk::MelFeatures mel = model->compute_mel(backend, audio, n16);
            note("mel", ms_since(t));

            t = Clock::now();
            auto last = t;
            double layers_total = 0.0;
            const pk::EncoderOutput enc = model->encode(backend, mel, [&](int stage, const float*, int64_t) {
                const double v = ms_since(last);
                if (stage < 0) {
                    note("subsampling", v);
                } else {
                    layers_total += v;
                    if (timed) layer_ms.push_back(v);
                }
                last = Clock::now();
            });
            note("encoder_layers", layers_total);
            note("encoder_rest", ms_since(last));  // after the last layer (copy-out, if any)
            note("encoder", ms_since(t));

            t = Clock::now();
            std::vector<pk::TranscriptToken> tokens =
                dec->decode(backend.team(), backend.arena(), enc.data, enc.frames, enc.frames);
            note("decode", ms_since(t));
            n_tokens = tokens.size();
            enc_frames = enc.frames;
            t = Clock::now();
            const pk::Transcript tr = model->transcript_builder().build(std::move(tokens), dec->timestamp_rule());
            note("transcript", ms_since(t));
            note("total", ms_since(t_total));
            (void)tr;
        }

        const double total = bench::median_of(ms["total"]);
        std::printf("{\n  \"model\": \"%s\",\n  \"clip\": \"%s\",\n  \"audio_seconds\": %.3f,\n", args.model, args.clip, audio_s);
        std::printf("  \"threads\": %d,\n  \"reps\": %d,\n  \"load_ms\": %.1f,\n", n_threads, reps, load_ms);
        std::printf("  \"encoder_frames\": %lld,\n  \"tokens\": %zu,\n", static_cast<long long>(enc_frames), n_tokens);
        std::printf("  \"working_set_bytes\": %zu,\n", backend.working_set_bytes());
        std::printf("  \"rtfx\": %.2f,\n  \"median_ms\": {\n", audio_s * 1000.0 / total);
        const char* order[] = {"prepare_audio", "mel", "subsampling", "encoder_layers", "encoder_rest",
                               "encoder", "decode", "transcript", "total"};
        for (const char* stage : order)
            std::printf("    \"%s\": %.3f,\n", stage, bench::median_of(ms[stage]));
        std::printf("    \"per_layer\": %.3f\n  },\n", bench::median_of(layer_ms));
        std::printf("  \"share_of_total\": {\"mel\": %.3f, \"subsampling\": %.3f, \"encoder_layers\": %.3f, "
                    "\"decode\": %.3f}\n}\n",
                    bench::median_of(ms["mel"]) / total, bench::median_of(ms["subsampling"]) / total,
                    bench::median_of(ms["encoder_layers"]) / total, bench::median_of(ms["decode"]) / total);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    return 0;
}
