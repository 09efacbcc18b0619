// A speaker encoder: voice-detect.cpp's `voicedetect` GGUF (general.architecture
// "voicedetect"), audio in, one L2-normalised embedding out. The front end is the Kaldi fbank
// of voicedetect.fbank.* with per-utterance mean removal (kaldi_fbank.h); the network is that
// of voicedetect.arch: "ecapa_tdnn" (ecapa_tdnn.h), "wespeaker_resnet34" (wespeaker_resnet.h),
// "eres2net" (eres2net.h) or "campplus" (campplus.h), behind speaker_network.h.
//
// Fingerprints (parakeet.cpp's, so that stored embeddings are not compared across encoders):
// family() is "voicedetect:<voicedetect.arch>:<general.name>:<voicedetect.embedding_dim>" (a
// missing value stays empty, nothing is escaped), identity() "sha256:<hex of the file's
// bytes>" (for a bundle's component, of its source file's bytes, as the bundle records them).
//
// A loaded encoder is immutable; embed() serialises its callers on the encoder's own backend.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "kernels/kernel_table.h"
#include "model/load_options.h"
#include "model/speaker/kaldi_fbank.h"
#include "model/speaker/speaker_network.h"
#include "runtime/backend.h"

namespace pk::speaker {

class SpeakerEncoder {
public:
    // Loads and checks the file at `path` (hashing it before and after). Throws GgufError,
    // ModelError (a malformed file, one with no speaker embedding, or a file that changed during
    // the load), Unsupported (another architecture or front end), or, for a file of another
    // model kind, Unsupported naming it.
    static std::unique_ptr<SpeakerEncoder> load(const std::string& path, const LoadOptions& options = {});
    // The same from an open reader (a bundle's component view, which it keeps), with the
    // identity the caller vouches for (a bundle's "sha256:" + source_sha256); the file is not
    // hashed.
    static std::unique_ptr<SpeakerEncoder> load(GgufReader gguf, std::string identity, const LoadOptions& options = {});

    int dim() const { return dim_; }
    int sample_rate() const { return fbank_->config().sample_rate; }
    const std::string& family() const { return family_; }
    const std::string& identity() const { return identity_; }
    IsaLevel isa() const { return kernels_->level; }

    // The embedding of `n` mono samples at `sample_rate` (any rate > 0; resampled to the front
    // end's rate), L2-normalised when voicedetect.l2_normalize says so (the default). Throws
    // InvalidAudio ("no audio", "invalid sample rate", too short for the network) and
    // InvalidAudio when the result is all zero or not finite.
    std::vector<float> embed(const float* samples, int64_t n, int sample_rate) const;

    // The features embed() computes on 16 kHz `samples` [n_frames, n_mels], for the tests.
    std::vector<float> features(const float* samples, int64_t n) const;

private:
    SpeakerEncoder() = default;

    std::string family_, identity_;
    int dim_ = 0;
    bool l2_normalize_ = true;
    const kernels::KernelTable* kernels_ = nullptr;
    std::unique_ptr<GgufReader> gguf_;  // the mapped weights the network reads
    std::unique_ptr<KaldiFbank> fbank_;
    std::unique_ptr<SpeakerNetwork> net_;
    std::unique_ptr<Backend> backend_;
};

}  // namespace pk::speaker
