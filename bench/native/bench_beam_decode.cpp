// Beam search cost in the decoder alone: greedy vs NeMo's beam search (beam 1, 2, 4, 8) on one
// encoder output, so the figures do not carry the encoder's noise on a shared machine.
//
//   bench_beam_decode MODEL.gguf CLIP.wav [threads=2] [reps=7]
//
// Encodes the clip once (timed `reps` times for the encoder's median), then runs the decoders
// round by round, the order rotating every round, one untimed warm-up each; prints JSON with
// the median decode milliseconds per configuration, the best hypothesis' token count, and the
// end-to-end RTFx each implies: audio seconds / (encoder median + that decode median).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
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
        const auto model = pk::Model::load(args.model);
        const pk::WavAudio wav = pk::read_wav_file(args.clip, 0);
        const double audio_s = static_cast<double>(wav.samples.size()) / wav.sample_rate;
        const pk::TransducerDecoder* dec = &bench::transducer_of(*model);
        pk::Backend backend(n_threads);
        std::lock_guard<std::mutex> lock(backend.mutex());

        std::vector<float> enc;
        int64_t frames = 0;
        std::vector<double> encoder_ms;
        for (int rep = -1; rep < reps; ++rep) {
            backend.arena().reset();
            const auto t = Clock::now();
            int64_t n16 = 0;
            const float* audio = model->prepare_audio(backend, wav.samples.data(),
                                                      static_cast<int64_t>(wav.samples.size()), wav.sample_rate, &n16);
            const pk::EncoderOutput e = model->encode(backend, model->compute_mel(backend, audio, n16));
            if (rep >= 0) encoder_ms.push_back(ms_since(t));
            frames = e.frames;
            enc.assign(e.data, e.data + e.frames * model->config().enc.d_model);
        }
        backend.arena().reset();

        const std::vector<int> beams = {0, 1, 2, 4, 8};  // 0: greedy
        std::vector<std::vector<double>> ms(beams.size());
        std::vector<size_t> tokens(beams.size());
        for (int rep = -1; rep < reps; ++rep) {
            for (size_t k = 0; k < beams.size(); ++k) {
                const size_t i = (k + static_cast<size_t>(rep + 1)) % beams.size();
                const auto t = Clock::now();
                if (beams[i] == 0) {
                    tokens[i] = dec->decode(backend.team(), backend.arena(), enc.data(), frames, frames).size();
                } else {
                    pk::BeamOptions o;
                    o.beam_size = beams[i];
                    tokens[i] = dec->decode_beam(backend.team(), backend.arena(), enc.data(), frames, frames, o)
                                    .front().tokens.size();
                }
                if (rep >= 0) ms[i].push_back(ms_since(t));
            }
        }
        const double enc_med = bench::median_of(encoder_ms);
        const double greedy_med = bench::median_of(ms[0]);
        std::printf("{\n  \"model\": \"%s\",\n  \"clip\": \"%s\",\n  \"audio_seconds\": %.3f,\n  \"threads\": %d,\n"
                    "  \"reps\": %d,\n  \"encoder_frames\": %lld,\n  \"encoder_ms\": %.2f,\n  \"decoders\": [\n",
                    args.model, args.clip, audio_s, n_threads, reps, static_cast<long long>(frames), enc_med);
        for (size_t i = 0; i < beams.size(); ++i) {
            const double d = bench::median_of(ms[i]);
            std::printf("    {\"config\": \"%s\", \"decode_ms\": %.2f, \"decode_vs_greedy\": %.2f, \"tokens\": %zu, "
                        "\"rtfx\": %.2f, \"rtfx_vs_greedy\": %.3f}%s\n",
                        beams[i] == 0 ? "greedy" : ("beam " + std::to_string(beams[i])).c_str(), d, d / greedy_med,
                        tokens[i], audio_s * 1000.0 / (enc_med + d), (enc_med + greedy_med) / (enc_med + d),
                        i + 1 < beams.size() ? "," : "");
        }
        std::printf("  ]\n}\n");
    } catch (const std::exception& e) {
        std::fprintf(stderr, "bench_beam_decode: %s\n", e.what());
        return 1;
    }
    return 0;
}
