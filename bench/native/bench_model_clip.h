// What the benchmarks that time one model on one clip share (bench_stages, bench_beam_decode):
// their command line, MODEL.gguf CLIP.wav [threads=2] [reps=7], and the model's transducer.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "model/model.h"

namespace bench {

struct ModelClipArgs {
    const char* model;
    const char* clip;
    int threads;
    int reps;
};

// Reads the command line into `a`, or prints the usage line and returns false.
inline bool parse_model_clip_args(int argc, char** argv, ModelClipArgs& a) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s MODEL.gguf CLIP.wav [threads=2] [reps=7]\n", argv[0]);
        return false;
    }
    a = ModelClipArgs{argv[1], argv[2], argc > 3 ? std::atoi(argv[3]) : 2, argc > 4 ? std::atoi(argv[4]) : 7};
    return true;
}

// The model's TDT/RNN-T head; throws for a CTC-only model.
inline const pk::TransducerDecoder& transducer_of(const pk::Model& model) {
    const pk::TransducerDecoder* dec = model.transducer();
    if (dec == nullptr) throw std::runtime_error("the model has no transducer head");
    return *dec;
}

}  // namespace bench
