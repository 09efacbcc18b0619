// What the speaker encoder needs of a network (ecapa_tdnn.h, wespeaker_resnet.h, eres2net.h,
// campplus.h): fbank features in, one embedding out. NetworkOf adapts a network class to it, so
// the networks themselves stay plain values and speaker_encoder.h includes none of them.
#pragma once

#include <cstdint>
#include <utility>

#include "runtime/arena.h"
#include "runtime/thread_team.h"

namespace pk::speaker {

class SpeakerNetwork {
public:
    virtual ~SpeakerNetwork() = default;
    virtual int64_t n_mels() const = 0;
    virtual int64_t embedding_dim() const = 0;
    // The fewest feature frames forward() takes.
    virtual int64_t min_frames() const = 0;
    // The embedding (before any normalisation) of `feats` [T, n_mels] into out[embedding_dim],
    // T >= min_frames().
    virtual void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const = 0;
};

template <class Net>
class NetworkOf final : public SpeakerNetwork {
public:
    explicit NetworkOf(Net net) : net_(std::move(net)) {}
    int64_t n_mels() const override { return net_.n_mels(); }
    int64_t embedding_dim() const override { return net_.embedding_dim(); }
    int64_t min_frames() const override { return net_.min_frames(); }
    void forward(ThreadTeam& team, Arena& arena, const float* feats, int64_t T, float* out) const override {
        net_.forward(team, arena, feats, T, out);
    }

private:
    Net net_;
};

}  // namespace pk::speaker
