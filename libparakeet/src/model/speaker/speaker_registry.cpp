#include "model/speaker/speaker_registry.h"

#include <cmath>
#include <utility>

#include "common/errors.h"

namespace pk::speaker {

std::vector<float> normalised(const float* v, int dim) {
    double norm2 = 0;
    for (int i = 0; i < dim; ++i) norm2 += static_cast<double>(v[i]) * v[i];
    if (!std::isfinite(norm2) || norm2 == 0) throw InvalidArgument("speaker embedding is all zero or not finite");
    const double inv = 1.0 / std::sqrt(norm2);
    std::vector<float> out(dim);
    for (int i = 0; i < dim; ++i) out[i] = static_cast<float>(v[i] * inv);
    return out;
}

void SpeakerRegistry::add(const std::string& name, const float* embedding, int dim, const EncoderFingerprint& fp) {
    if (name.empty()) throw InvalidArgument("speaker name is empty");
    if (embedding == nullptr || dim <= 0) throw InvalidArgument("no embedding");
    if (dim_ != 0 && dim != dim_)
        throw InvalidArgument("speaker embedding has " + std::to_string(dim) + " values, registry expects " +
                              std::to_string(dim_));
    const std::vector<float> v = normalised(embedding, dim);
    if (!fp.empty()) {
        if (speakers_.empty()) {
            fingerprint_ = fp;
        } else if (fingerprint_.empty()) {
            throw InvalidArgument("registry holds embeddings without an encoder fingerprint; "
                                  "fingerprinted ones cannot be mixed in");
        } else if (fp.family != fingerprint_.family) {
            throw InvalidArgument("embedding is from encoder family '" + fp.family + "', the registry holds '" +
                                  fingerprint_.family + "'");
        }
    }
    dim_ = dim;
    for (RegisteredSpeaker& s : speakers_) {
        if (s.name != name) continue;
        for (int i = 0; i < dim; ++i) s.sum[i] += v[i];
        ++s.count;
        return;
    }
    speakers_.push_back(RegisteredSpeaker{name, 1, v});
}

std::string SpeakerRegistry::check_encoder(int dim, const EncoderFingerprint& encoder) const {
    if (speakers_.empty()) return "";
    if (dim != dim_)
        throw InvalidArgument("registry holds " + std::to_string(dim_) + "-value embeddings, this model produces " +
                              std::to_string(dim));
    if (fingerprint_.empty()) {
        if (strict_) throw InvalidArgument("registry has no encoder fingerprint (strict)");
        return "no encoder fingerprint";
    }
    if (fingerprint_.family != encoder.family)
        throw InvalidArgument("registry holds embeddings of encoder family '" + fingerprint_.family +
                              "', this model is '" + encoder.family + "'");
    return fingerprint_.weights == encoder.weights ? "" : "other weights";
}

SpeakerMatch SpeakerRegistry::identify(const float* embedding, float accept, float margin) const {
    if (accept <= 0) accept = kDefaultAccept;
    if (margin <= 0) margin = kDefaultMargin;
    SpeakerMatch m;
    if (speakers_.empty()) return m;
    const std::vector<float> q = normalised(embedding, dim_);
    double best = -2, second = -2;
    const RegisteredSpeaker* winner = nullptr;
    for (const RegisteredSpeaker& s : speakers_) {
        double dot = 0, norm2 = 0;
        for (int i = 0; i < dim_; ++i) dot += static_cast<double>(q[i]) * s.sum[i], norm2 += double(s.sum[i]) * s.sum[i];
        const double cosine = norm2 > 0 ? dot / std::sqrt(norm2) : 0;
        if (cosine > best) {
            second = best;
            best = cosine;
            winner = &s;
        } else if (cosine > second) {
            second = cosine;
        }
    }
    m.score = static_cast<float>(best);
    const bool clear = speakers_.size() < 2 || best - second >= margin;
    if (best >= accept && clear) m.name = winner->name;
    return m;
}

SpeakerRegistry SpeakerRegistry::restore(int dim, EncoderFingerprint fp, std::vector<RegisteredSpeaker> speakers) {
    SpeakerRegistry r;
    for (const RegisteredSpeaker& s : speakers) {
        if (s.name.empty()) throw InvalidArgument("speaker name is empty");
        if (s.count < 1) throw InvalidArgument("speaker '" + s.name + "' has no embeddings");
        if (static_cast<int>(s.sum.size()) != dim || dim <= 0)
            throw InvalidArgument("speaker '" + s.name + "' does not have " + std::to_string(dim) + " values");
        normalised(s.sum.data(), dim);  // refuses a zero or non-finite sum
        for (const RegisteredSpeaker& other : r.speakers_)
            if (other.name == s.name) throw InvalidArgument("speaker '" + s.name + "' appears twice");
        r.speakers_.push_back(s);
    }
    r.dim_ = speakers.empty() ? 0 : dim;
    r.fingerprint_ = std::move(fp);
    return r;
}

}  // namespace pk::speaker
