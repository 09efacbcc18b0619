// A voice registry: named speakers, each the sum of their L2-normalised embeddings, matched by
// cosine to the normalised sum (the centroid). parakeet.cpp's rules (its
// src/speaker_registry.cpp, ABI 9/10):
//   - adding normalises the vector and adds it to the name's sum (names match exactly; the first
//     embedding fixes the dimension);
//   - a name is given only when the best cosine is at least `accept` and, with two or more
//     speakers, beats the second best by at least `margin`; the score is the best cosine (0 for
//     an empty registry);
//   - fingerprints tie the stored vectors to an encoder (speaker_encoder.h): an embedding from
//     another family is refused; from other weights of the same family it is used with the
//     warning "other weights"; a registry without a fingerprint gives the warning "no encoder
//     fingerprint", or the error when strict.
// Files (speaker_registry_file.h) keep the sums and counts, so a reloaded registry averages on.
//
// Not thread-safe: the C ABI's handle serialises the calls.
#pragma once

#include <string>
#include <vector>

namespace pk::speaker {

struct RegisteredSpeaker {
    std::string name;
    int count = 0;           // embeddings added
    std::vector<float> sum;  // of the normalised embeddings
};

struct SpeakerMatch {
    std::string name;  // "" when no speaker is accepted
    float score = 0;   // the best cosine (0 for an empty registry)
};

// The fingerprint of the encoder that made an embedding (empty strings: none).
struct EncoderFingerprint {
    std::string family, weights;
    bool empty() const { return family.empty() && weights.empty(); }
};

class SpeakerRegistry {
public:
    static constexpr float kDefaultAccept = 0.5f;
    static constexpr float kDefaultMargin = 0.05f;

    int dim() const { return dim_; }  // 0 until the first embedding
    int size() const { return static_cast<int>(speakers_.size()); }
    const std::vector<RegisteredSpeaker>& speakers() const { return speakers_; }
    const EncoderFingerprint& fingerprint() const { return fingerprint_; }
    bool strict() const { return strict_; }
    void set_strict(bool strict) { strict_ = strict; }

    // Adds `embedding` (dim values) under `name`. With a fingerprint: an empty registry takes
    // it; a registry whose entries have none, or another family's, refuses it. Throws
    // InvalidArgument ("speaker name is empty", "no embedding", "speaker embedding has N values,
    // registry expects M", "speaker embedding is all zero or not finite", fingerprint refusals).
    void add(const std::string& name, const float* embedding, int dim, const EncoderFingerprint& fp = {});

    // Checks that embeddings of `encoder` (dim values) may be compared with this registry's:
    // throws InvalidArgument for another dimension or family (or no fingerprint when strict);
    // returns the warning otherwise ("" when the fingerprints match or the registry is empty).
    std::string check_encoder(int dim, const EncoderFingerprint& encoder) const;

    // The best match of `embedding` (dim() values; normalised here). accept / margin of 0 or
    // less mean the defaults.
    SpeakerMatch identify(const float* embedding, float accept = 0, float margin = 0) const;

    // Rebuilds a registry from stored parts (the file reader): the same checks as add().
    static SpeakerRegistry restore(int dim, EncoderFingerprint fp, std::vector<RegisteredSpeaker> speakers);

private:
    int dim_ = 0;
    std::vector<RegisteredSpeaker> speakers_;  // in first-added order
    EncoderFingerprint fingerprint_;
    bool strict_ = false;
};

// v / |v| in double, rounded to float; throws InvalidArgument when v is all zero or not finite.
std::vector<float> normalised(const float* v, int dim);

}  // namespace pk::speaker
