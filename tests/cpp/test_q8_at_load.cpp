// Quantising a q8_0 model's remaining F32 matrices at load (model/layers/q8_at_load.h): the
// encoder is bit-identical to our converter's, the rule picks the intended files and tensors,
// and PARAKEET_Q8_ALL switches it.
#include <gtest/gtest.h>

#include <cstdlib>
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
    EXPECT_TRUE(pk::is_q8_0_model(pk::GgufReader::open(fixture("model-q8_0.gguf"))));
    EXPECT_FALSE(pk::is_q8_0_model(pk::GgufReader::open(fixture("model.gguf"))));
    EXPECT_FALSE(pk::is_q8_0_model(pk::GgufReader::open(fixture("model-f16.gguf"))));
    for (const char* n : {"encoder.layers.0.conv.pointwise_conv1.weight", "encoder.layers.16.conv.pointwise_conv2.weight",
                          "encoder.pre_encode.out.weight"})
        EXPECT_TRUE(pk::quantised_at_load(n)) << n;
    for (const char* n : {"encoder.layers.0.conv.pointwise_conv1.bias", "encoder.layers.0.conv.depthwise_conv.weight",
                          "encoder.pre_encode.conv.3.weight", "joint.joint_net.2.weight",
                          "ctc_decoder.decoder_layers.0.weight", "decoder.decoder_layers.0.weight",
                          "decoder.prediction.dec_rnn.lstm.weight_ih_l0", "decoder.prediction.embed.weight"})
        EXPECT_FALSE(pk::quantised_at_load(n)) << n;
    // The subsampling's pointwise convolutions only on request.
    setenv("PARAKEET_Q8_SUBSAMPLING", "1", 1);
    EXPECT_TRUE(pk::quantised_at_load("encoder.pre_encode.conv.3.weight"));
    EXPECT_TRUE(pk::quantised_at_load("encoder.pre_encode.conv.6.weight"));
    EXPECT_FALSE(pk::quantised_at_load("encoder.pre_encode.conv.0.weight"));
    setenv("PARAKEET_Q8_SUBSAMPLING", "0", 1);
    EXPECT_FALSE(pk::quantised_at_load("encoder.pre_encode.conv.3.weight"));
    setenv("PARAKEET_Q8_SUBSAMPLING", "on", 1);
    EXPECT_THROW(pk::quantised_at_load("encoder.pre_encode.conv.3.weight"), pk::InvalidInput);
    unsetenv("PARAKEET_Q8_SUBSAMPLING");
}

size_t packed_bytes_with(const std::string& path, const char* q8_all) {
    setenv("PARAKEET_Q8_ALL", q8_all, 1);
    const auto m = pk::Model::load(path);
    unsetenv("PARAKEET_Q8_ALL");
    return m->packed_bytes();
}

TEST(Q8AtLoad, EnvironmentSwitch) {
    // The conv pointwise weights (3·d² per layer) shrink from 4 to 1.125 bytes a weight.
    const size_t kept = packed_bytes_with(fixture("model-q8_0.gguf"), "0");
    const size_t quantised = packed_bytes_with(fixture("model-q8_0.gguf"), "1");
    EXPECT_LT(quantised, kept);
    EXPECT_EQ(packed_bytes_with(fixture("model-q8_0.gguf"), ""), quantised);  // the default
    // An f32 (or f16) file is left alone.
    EXPECT_EQ(packed_bytes_with(fixture("model.gguf"), "1"), packed_bytes_with(fixture("model.gguf"), "0"));
    setenv("PARAKEET_Q8_ALL", "yes", 1);
    EXPECT_THROW(pk::Model::load(fixture("model-q8_0.gguf")), pk::InvalidInput);
    unsetenv("PARAKEET_Q8_ALL");
}

}  // namespace
