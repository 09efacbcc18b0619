// ResNet34's residual blocks run a band of rows at a time (model/speaker/residual_block_bands.h)
// give the bits of running each convolution over the whole map (conv1, the down conv, then conv2
// with the shortcut added in its transform), for the identity block and the strided one with a
// down conv, f32 and q8_0 files, maps whose lengths are not multiples of the bands or tiles, and
// teams of 1 and 3 threads, at every ISA level.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "gguf_test_builder.h"
#include "gguf_test_loader.h"
#include "isa_levels.h"
#include "model/speaker/residual_block_bands.h"
#include "test_kernel_ops_util.h"

namespace {

using pk::speaker::Conv2dGemm;

class SpeakerResidualBands : public isa_test::LevelTest {};

struct Case {
    const char* name;
    int64_t in, out;
    int stride;
    int64_t T, F;
};

void check(pk::IsaLevel level, const Case& c, bool q8) {
    SCOPED_TRACE(std::string(c.name) + (q8 ? ", q8_0" : ", f32"));
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    const std::vector<uint8_t> file = gguf_test::GgufBuilder()
                                          .tensor_f32("conv1", {3, 3, u(c.in), u(c.out)},
                                                      kt::random_vector(c.out * c.in * 9, 41))
                                          .tensor_f32("conv1.b", {u(c.out)}, kt::random_vector(c.out, 42))
                                          .tensor_f32("conv2", {3, 3, u(c.out), u(c.out)},
                                                      kt::random_vector(c.out * c.out * 9, 43, -0.2f, 0.2f))
                                          .tensor_f32("conv2.b", {u(c.out)}, kt::random_vector(c.out, 44))
                                          .tensor_f32("down", {u(c.in), u(c.out)}, kt::random_vector(c.out * c.in, 45))
                                          .tensor_f32("down.b", {u(c.out)}, kt::random_vector(c.out, 46))
                                          .build();
    const gguf_test::LoadedGguf m(file, level, q8);
    const Conv2dGemm conv1 = Conv2dGemm::load_square(m.gguf, m.loader, "conv1", "conv1.b", c.in, c.stride);
    const Conv2dGemm conv2 = Conv2dGemm::load_square(m.gguf, m.loader, "conv2", "conv2.b", c.out, 1);
    const Conv2dGemm down = Conv2dGemm::load_square(m.gguf, m.loader, "down", "down.b", c.in, c.stride);
    const bool identity = c.stride == 1 && c.in == c.out;
    const pk::speaker::ResidualBlock block{conv1, conv2, identity ? nullptr : &down};
    ASSERT_TRUE(pk::speaker::runs_in_bands(block));

    const int64_t To = conv1.out_t(c.T), Fo = conv1.out_f(c.F);
    const std::vector<float> x = kt::random_vector(c.T * c.F * c.in, 47);
    pk::ThreadTeam one(1);
    pk::Arena arena;
    std::vector<float> h(static_cast<size_t>(To * Fo * c.out)), shortcut(h.size()), want(h.size());
    conv1.forward(one, arena, x.data(), c.T, c.F, h.data(), /*relu=*/true);
    if (!identity) down.forward(one, arena, x.data(), c.T, c.F, shortcut.data(), /*relu=*/false);
    conv2.forward_add_relu(one, arena, h.data(), To, Fo, identity ? x.data() : shortcut.data(), want.data());
    for (int threads : {1, 3}) {
        pk::ThreadTeam team(threads);
        auto got = kt::poisoned(want.size());
        pk::speaker::run_residual_block_in_bands(team, arena, block, x.data(), c.T, c.F, got.data());
        EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * sizeof(float))) << threads << " threads";
        EXPECT_EQ(arena.used_bytes(), 0u);
    }
}

TEST_P(SpeakerResidualBands, BandsGiveTheWholeMapsBits) {
    const Case cases[] = {
        {"identity block, 7 bands", 32, 32, 1, 101, 9},
        {"stride 2 with a down conv, odd map", 32, 64, 2, 103, 11},
        {"stride 2, fewer bands than threads", 32, 32, 2, 29, 6},
    };
    for (const Case& c : cases)
        for (bool q8 : {false, true}) check(level(), c, q8);
}

TEST(SpeakerResidualBands, OtherShapesAreNotBanded) {
    const auto u = [](int64_t v) { return static_cast<uint64_t>(v); };
    const std::vector<uint8_t> file = gguf_test::GgufBuilder()
                                          .tensor_f32("k3", {3, 3, u(8), u(8)}, kt::random_vector(8 * 8 * 9, 51))
                                          .tensor_f32("k1", {u(8), u(8)}, kt::random_vector(8 * 8, 52))
                                          .build();
    const gguf_test::LoadedGguf m(file, isa_test::highest_level(), /*q8_at_load=*/false);
    const Conv2dGemm k3 = Conv2dGemm::load_square(m.gguf, m.loader, "k3", "", 8, 1);
    const Conv2dGemm k3s2 = Conv2dGemm::load_square(m.gguf, m.loader, "k3", "", 8, 2);
    const Conv2dGemm k1 = Conv2dGemm::load_square(m.gguf, m.loader, "k1", "", 8, 1);
    EXPECT_TRUE(pk::speaker::runs_in_bands({k3, k3, nullptr}));
    EXPECT_FALSE(pk::speaker::runs_in_bands({k3s2, k3, nullptr})) << "a strided block needs its down conv";
    EXPECT_FALSE(pk::speaker::runs_in_bands({k3, k1, nullptr})) << "conv2 must be a Winograd one";
    EXPECT_FALSE(pk::speaker::runs_in_bands({k3s2, k3, &k3})) << "the down conv must be 1x1";
}

INSTANTIATE_ISA_LEVELS(SpeakerResidualBands);

}  // namespace
