// Quantising a q8_0 model's remaining F32 matrices at load (model/layers/q8_at_load.h): the
// encoder is bit-identical to our converter's, the rule picks the intended files and tensors,
// and LoadOptions::q8_all switches it (the environment's PARAKEET_Q8_ALL reaches it through the
// C ABI: test_capi_load_options.cpp).
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>
#include <vector>

#include "common/errors.h"
#include "kernels/quantize_q8_0.h"
#include "model/layers/q8_at_load.h"
#include "model/model.h"
#include "nemo_fixtures.h"

namespace {

std::string fixture(const std::string& file) { return nemo_fixtures::data_dir() + "/nemo/hybrid_tdt_ctc/" + file; }

// Every tensor the converter stored as Q8_0 (parakeet_py/convert/quantize.py), re-encoded here
// from the f32 file's tensor: the same bytes, so quantising at load gives what a fully
// quantised file would hold.
TEST(Q8AtLoad, QuantizerMatchesTheConverterByteForByte) {
    const pk::GgufReader f32 = pk::GgufReader::open(fixture("model.gguf"));
    const pk::GgufReader q8 = pk::GgufReader::open(fixture("model-q8_0.gguf"));
    int compared = 0;
    for (const pk::GgufTensor& t : q8.tensors()) {
        if (t.type != pk::GgmlType::Q8_0) continue;
        const pk::GgufTensor* src = f32.find_tensor(t.name);
        ASSERT_NE(src, nullptr) << t.name;
        ASSERT_EQ(src->type, pk::GgmlType::F32) << t.name;
        std::vector<uint8_t> out(t.n_bytes);
        pk::kernels::quantize_q8_0(reinterpret_cast<const float*>(src->data), src->n_elements, out.data());
        EXPECT_EQ(std::memcmp(out.data(), t.data, t.n_bytes), 0) << t.name;
        ++compared;
    }
    EXPECT_GT(compared, 10);
}

TEST(Q8AtLoad, RoundsHalfAwayFromZeroWithTheFloatScale) {
    std::vector<float> x(64, 0.0f);
    x[0] = 127.0f;  // d = 1: x is q
    x[1] = 2.5f;    // half away from zero: 3 (half to even would give 2)
    x[2] = -2.5f;
    x[3] = -0.49f;
    // second block all zero: d = 0, q = 0
    std::vector<uint8_t> out(2 * 34, 0xAB);
    pk::kernels::quantize_q8_0(x.data(), 64, out.data());
    uint16_t d;
    std::memcpy(&d, out.data(), 2);
    EXPECT_EQ(d, 0x3C00);  // 1.0 as an IEEE half
    EXPECT_EQ(static_cast<int8_t>(out[2]), 127);
    EXPECT_EQ(static_cast<int8_t>(out[3]), 3);
    EXPECT_EQ(static_cast<int8_t>(out[4]), -3);
    EXPECT_EQ(static_cast<int8_t>(out[5]), 0);
    for (int i = 34; i < 68; ++i) EXPECT_EQ(out[static_cast<size_t>(i)], 0) << i;
    EXPECT_THROW(pk::kernels::quantize_q8_0(x.data(), 40, out.data()), std::invalid_argument);
}

TEST(Q8AtLoad, RulePicksQ8_0FilesAndTheRemainingMatmulWeights) {
    EXPECT_TRUE(pk::is_quantised_model(pk::GgufReader::open(fixture("model-q8_0.gguf"))));
    EXPECT_FALSE(pk::is_quantised_model(pk::GgufReader::open(fixture("model.gguf"))));
    EXPECT_FALSE(pk::is_quantised_model(pk::GgufReader::open(fixture("model-f16.gguf"))));
    for (const char* n : {"encoder.layers.0.conv.pointwise_conv1.weight", "encoder.layers.16.conv.pointwise_conv2.weight",
                          "encoder.pre_encode.out.weight"})
        EXPECT_TRUE(pk::quantised_at_load(n, false)) << n;
    for (const char* n : {"encoder.layers.0.conv.pointwise_conv1.bias", "encoder.layers.0.conv.depthwise_conv.weight",
                          "encoder.pre_encode.conv.3.weight", "joint.joint_net.2.weight",
                          "ctc_decoder.decoder_layers.0.weight", "decoder.decoder_layers.0.weight",
                          "decoder.prediction.dec_rnn.lstm.weight_ih_l0", "decoder.prediction.embed.weight"})
        EXPECT_FALSE(pk::quantised_at_load(n, false)) << n;
    // The subsampling's pointwise convolutions only on request.
    EXPECT_TRUE(pk::quantised_at_load("encoder.pre_encode.conv.3.weight", true));
    EXPECT_TRUE(pk::quantised_at_load("encoder.pre_encode.conv.6.weight", true));
    EXPECT_FALSE(pk::quantised_at_load("encoder.pre_encode.conv.0.weight", true));
    EXPECT_FALSE(pk::quantised_at_load("encoder.pre_encode.conv.3.weight", false));
    EXPECT_TRUE(pk::quantised_at_load("encoder.layers.0.conv.pointwise_conv1.weight", true));
}

size_t packed_bytes_with(const std::string& path, bool q8_all) {
    pk::LoadOptions options;
    options.q8_all = q8_all;
    return pk::Model::load(path, options)->packed_bytes();
}

TEST(Q8AtLoad, LoadOptionSwitchesIt) {
    // The conv pointwise weights (3·d² per layer) shrink from 4 to 1.125 bytes a weight.
    const size_t kept = packed_bytes_with(fixture("model-q8_0.gguf"), false);
    const size_t quantised = packed_bytes_with(fixture("model-q8_0.gguf"), true);
    EXPECT_LT(quantised, kept);
    EXPECT_EQ(pk::Model::load(fixture("model-q8_0.gguf"))->packed_bytes(), quantised);  // the default
    // An f32 (or f16) file is left alone.
    EXPECT_EQ(packed_bytes_with(fixture("model.gguf"), true), packed_bytes_with(fixture("model.gguf"), false));
}

// The subsampling's pointwise convolutions are quantised only with q8_subsampling: the encoder
// output changes with it (in a q8_0 model; an f32 one is left alone).
std::vector<float> encoder_output(const std::string& path, bool q8_subsampling) {
    pk::LoadOptions options;
    options.q8_subsampling = q8_subsampling;
    const auto m = pk::Model::load(path, options);
    std::vector<float> samples(16000);
    for (size_t i = 0; i < samples.size(); ++i) samples[i] = 0.1f * static_cast<float>((i * 7919) % 200) / 200.0f;
    pk::Backend b(1);
    b.arena().reset();
    const auto mel = m->compute_mel(b, samples.data(), static_cast<int64_t>(samples.size()));
    const auto enc = m->encode(b, mel);
    return std::vector<float>(enc.data, enc.data + enc.frames * m->config().enc.d_model);
}

TEST(Q8AtLoad, SubsamplingOptionQuantisesThePointwiseConvolutions) {
    EXPECT_NE(encoder_output(fixture("model-q8_0.gguf"), true), encoder_output(fixture("model-q8_0.gguf"), false));
    EXPECT_EQ(encoder_output(fixture("model.gguf"), true), encoder_output(fixture("model.gguf"), false));
}

}  // namespace
