// GgufReader against a file written by ggml's own Python writer (the `gguf` package):
// tests/data/gguf/reference_writer.gguf, made by make_gguf_reference.py beside it. The values
// checked here are recomputed from the formulas in that script, so the reader and an
// independent writer must agree on every field's layout — including q8_0's block layout.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "test_data_dir.h"

namespace {

using pk::GgufReader;
using pk::GgufValueType;

std::string reference_path() { return test_data_dir() + "/gguf/reference_writer.gguf"; }

// IEEE half to float, written out so the test does not depend on the library's conversions.
float half_to_float(uint16_t h) {
    const int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
    float v;
    if (exponent == 0) {
        v = std::ldexp(static_cast<float>(mantissa), -24);
    } else if (exponent == 31) {
        v = mantissa ? NAN : INFINITY;
    } else {
        v = std::ldexp(static_cast<float>(mantissa + 1024), exponent - 25);
    }
    return sign ? -v : v;
}

TEST(GgufReference, MetadataWrittenByGgufPyReadsBack) {
    const GgufReader r = GgufReader::open(reference_path());
    EXPECT_EQ(r.version(), 3u);
    EXPECT_EQ(r.alignment(), 64u);
    EXPECT_EQ(r.get_string("general.architecture"), "parakeet");
    EXPECT_EQ(r.find_key("t.u8")->type, GgufValueType::U8);
    EXPECT_EQ(r.get_u32("t.u8"), 200u);
    EXPECT_EQ(r.get_i32("t.i8"), -5);
    EXPECT_EQ(r.get_u32("t.u16"), 60000u);
    EXPECT_EQ(r.get_i32("t.i16"), -30000);
    EXPECT_EQ(r.find_key("parakeet.encoder.d_model")->type, GgufValueType::U32);
    EXPECT_EQ(r.get_i64("parakeet.encoder.d_model"), 176);
    EXPECT_EQ(r.get_i32("t.i32"), -7);
    EXPECT_EQ(r.get_f32("parakeet.preprocessor.preemph"), 0.97f);
    EXPECT_TRUE(r.get_bool("parakeet.encoder.xscaling"));
    EXPECT_EQ(r.get_string("parakeet.arch"), "tdt");
    EXPECT_EQ(r.get_u64("t.u64"), (1ull << 63) + 5);
    EXPECT_EQ(r.get_i64("t.i64"), -(1ll << 40));
    EXPECT_EQ(r.get_f64("t.f64"), 1.0 / 3.0);
    EXPECT_EQ(r.get_string_array("parakeet.tokenizer.pieces"),
              (std::vector<std::string>{"<unk>", "\xE2\x96\x81" "the", "s", ""}));
    EXPECT_EQ(r.get_i64_array("parakeet.tdt.durations"), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(r.get_f32_array("t.floats"), (std::vector<float>{0.5f, -1.25f}));
    const pk::GgufKeyInfo* nested = r.find_key("t.nested");
    ASSERT_NE(nested, nullptr);
    EXPECT_EQ(nested->elem_type, GgufValueType::Array);
    EXPECT_EQ(nested->count, 2u);
}

TEST(GgufReference, TensorsWrittenByGgufPyReadBack) {
    const GgufReader r = GgufReader::open(reference_path());
    ASSERT_EQ(r.tensors().size(), 4u);
    EXPECT_EQ(r.data_offset() % 64, 0u);
    for (const pk::GgufTensor& t : r.tensors()) EXPECT_EQ(t.offset % 64, 0u) << t.name;

    const pk::GgufTensor& w = r.tensor("encoder.w");
    EXPECT_EQ(w.type, pk::GgmlType::F32);
    EXPECT_EQ(w.shape_string(), "[3, 2]");  // numpy (2, 3) is ne = [3, 2]
    for (int i = 0; i < 6; ++i) {
        float v;
        std::memcpy(&v, w.data + 4 * i, 4);
        EXPECT_EQ(v, i * 0.5f - 1.0f) << i;
    }

    const pk::GgufTensor& h = r.tensor("encoder.h");
    EXPECT_EQ(h.type, pk::GgmlType::F16);
    EXPECT_EQ(h.shape_string(), "[5]");
    for (int i = 0; i < 5; ++i) {
        uint16_t bits;
        std::memcpy(&bits, h.data + 2 * i, 2);
        EXPECT_EQ(half_to_float(bits), static_cast<float>(i - 2)) << i;
    }

    // q8_0: per block of 32, an f16 scale d = max|x| / 127, then 32 int8 q = round(x / d).
    const pk::GgufTensor& q = r.tensor("joint.enc.weight");
    EXPECT_EQ(q.type, pk::GgmlType::Q8_0);
    EXPECT_EQ(q.shape_string(), "[64, 2]");
    EXPECT_EQ(q.n_bytes, 4u * 34u);
    EXPECT_EQ(q.row_bytes(), 68u);
    for (int block = 0; block < 4; ++block) {
        const uint8_t* b = q.data + 34 * block;
        uint16_t d_bits;
        std::memcpy(&d_bits, b, 2);
        const float d = half_to_float(d_bits);
        float amax = 0;
        for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(std::sin(static_cast<float>(block * 32 + j))));
        EXPECT_NEAR(d, amax / 127, amax / 127 * 1e-3) << "block " << block;
        int max_q = 0;
        for (int j = 0; j < 32; ++j) {
            const int qv = static_cast<int8_t>(b[2 + j]);
            max_q = std::max(max_q, std::abs(qv));
            EXPECT_NEAR(d * qv, std::sin(static_cast<float>(block * 32 + j)), d * 0.5f + 1e-3f)
                << "block " << block << " element " << j;
        }
        EXPECT_EQ(max_q, 127) << "block " << block;
    }

    const pk::GgufTensor& one = r.tensor("one");
    float v;
    std::memcpy(&v, one.data, 4);
    EXPECT_EQ(v, 42.0f);
}

}  // namespace
