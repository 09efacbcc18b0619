// ERes2Net at its published widths (m_channels 32: chunks of 16 to 128 channels, blocks of 64 to
// 512) with one block per stage, on random weights built in memory: any team size gives the bits
// of a team of one, f32 and q8_0, at every ISA level. The committed tiny fixture (test_speaker_2d)
// has chunks of one channel, whose passes never split; here a band's passes split over the team
// where the audio has fewer bands than twice the threads (70 frames), and the bands split over
// the threads where it has more (230 frames, a length no band size divides).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gguf_test_builder.h"
#include "gguf_test_loader.h"
#include "isa_levels.h"
#include "model/speaker/eres2net.h"
#include "model/speaker/voicedetect_schema.h"
#include "test_kernel_ops_util.h"

namespace {

namespace vd = pk::schema::voicedetect;

constexpr int64_t kMels = 80, kStem = 32, kScale = 2, kDim = 192;

// The network's convolutions in forward order (ERes2Net::load's), each with random weights of
// variance 1 / fan-in so that the Hardtanh(0, 20) maps neither die nor saturate.
class Network {
public:
    std::vector<uint8_t> build() {
        conv(1, kStem, 3, 1);
        int64_t in = kStem, bins = kMels;
        int64_t channels[4];
        for (int s = 0; s < 4; ++s) {
            const int64_t planes = kStem << s, width = planes / 2, out = 2 * planes;
            const int stride = s == 0 ? 1 : 2;
            conv(in, planes, 1, stride);
            for (int64_t i = 0; i < kScale; ++i) {
                if (i > 0 && s >= 2) aff(width);
                conv(width, width, 3, 1);
            }
            conv(planes, out, 1, 1);
            conv(in, out, 1, stride);  // the shortcut: every block here changes the map's shape
            in = out;
            channels[s] = out;
            if (s > 0) bins = (bins + 1) / 2;
            if (s == 0) continue;
            conv(channels[s - 1], out, 3, 2);
            aff(out);
        }
        const uint64_t pooled = static_cast<uint64_t>(2 * channels[3] * bins);
        builder_.tensor_f32("seg.w", {pooled, kDim}, weights(pooled * kDim, pooled))
            .tensor_f32("seg.b", {kDim}, kt::random_vector(kDim, seed_++, -0.1f, 0.1f))
            .kv_string_array(vd::kEres2netConvWeight, names_)
            .kv_string_array(vd::kEres2netConvBias, biases_)
            .kv_array<int32_t>(vd::kEres2netConvStride, gguf_test::kI32, strides_)
            .kv_array<int32_t>(vd::kEres2netNumBlocks, gguf_test::kI32, {1, 1, 1, 1})
            .kv_u32(vd::kEres2netScale, kScale)
            .kv_string(vd::kEres2netSegWeight, "seg.w")
            .kv_string(vd::kEres2netSegBias, "seg.b");
        return builder_.build();
    }

private:
    std::vector<float> weights(uint64_t n, uint64_t fan_in) {
        const float a = std::sqrt(3.0f / static_cast<float>(fan_in));
        return kt::random_vector(n, seed_++, -a, a);
    }
    void conv(int64_t in, int64_t out, int kernel, int stride) {
        const std::string name = "conv" + std::to_string(names_.size());
        const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
        const uint64_t fan_in = u(in * kernel * kernel);
        builder_.tensor_f32(name, {u(kernel), u(kernel), u(in), u(out)}, weights(fan_in * u(out), fan_in))
            .tensor_f32(name + ".b", {u(out)}, kt::random_vector(out, seed_++, 0.0f, 0.2f));
        names_.push_back(name);
        biases_.push_back(name + ".b");
        strides_.push_back(stride);
    }
    void aff(int64_t channels) {  // squeeze [x, y] to channels / 4, expand back
        conv(2 * channels, channels / 4, 1, 1);
        conv(channels / 4, channels, 1, 1);
    }

    gguf_test::GgufBuilder builder_;
    std::vector<std::string> names_, biases_;
    std::vector<int32_t> strides_;
    uint32_t seed_ = 500;
};

class SpeakerEres2netBands : public isa_test::LevelTest {};

TEST_P(SpeakerEres2netBands, AnyTeamGivesTheBitsOfOne) {
    const std::vector<uint8_t> file = Network().build();
    for (bool q8 : {false, true}) {
        const gguf_test::LoadedGguf m(file, level(), q8);
        const pk::speaker::ERes2Net net = pk::speaker::ERes2Net::load(m.gguf, m.loader, kMels);
        ASSERT_EQ(net.embedding_dim(), kDim);
        for (int64_t T : {70, 230}) {
            SCOPED_TRACE(std::string(q8 ? "q8_0" : "f32") + ", " + std::to_string(T) + " frames");
            const std::vector<float> feats = kt::random_vector(T * kMels, 600 + T, -3.0f, 3.0f);
            pk::Arena arena;
            std::vector<float> one(kDim);
            pk::ThreadTeam solo(1);
            net.forward(solo, arena, feats.data(), T, one.data());
            float energy = 0;
            for (float v : one) energy += v * v;
            ASSERT_TRUE(std::isfinite(energy) && energy > 0) << "a dead or overflowing network tests nothing";
            for (int threads : {2, 3}) {
                pk::ThreadTeam team(threads);
                auto got = kt::poisoned(kDim);
                net.forward(team, arena, feats.data(), T, got.data());
                EXPECT_EQ(0, std::memcmp(one.data(), got.data(), kDim * sizeof(float))) << threads << " threads";
                EXPECT_EQ(arena.used_bytes(), 0u);
            }
        }
    }
}

INSTANTIATE_ISA_LEVELS(SpeakerEres2netBands);

}  // namespace
