// GgufReader on valid files: every metadata type, the typed getters and their conversions,
// tensors of each supported type read back byte for byte, layout (alignment, data offset),
// and opening files from disk.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"

namespace {

using gguf_test::GgufBuilder;
using pk::GgufError;
using pk::GgufReader;
using pk::GgufValueType;

// Reads `bytes` from an exactly sized heap copy, so AddressSanitizer catches any over-read.
struct Loaded {
    std::vector<uint8_t> bytes;
    GgufReader reader;
    explicit Loaded(const std::vector<uint8_t>& b)
        : bytes(b), reader(GgufReader::from_buffer(bytes.data(), bytes.size(), "mem.gguf")) {}
};

std::string write_temp_file(const std::vector<uint8_t>& bytes, const std::string& stem) {
    const std::string path = ::testing::TempDir() + stem + "_" + std::to_string(::getpid()) + ".gguf";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
    return path;
}

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<uint8_t> v(n);
    for (auto& b : v) b = static_cast<uint8_t>(rng());
    return v;
}

// Expects `f` to throw GgufError whose message contains `needle`; returns the message.
template <class F>
std::string expect_error(F&& f, const std::string& needle) {
    try {
        f();
    } catch (const GgufError& e) {
        EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
            << "message: " << e.what() << "\nexpected to contain: " << needle;
        return e.what();
    }
    ADD_FAILURE() << "no GgufError; expected one containing: " << needle;
    return "";
}

std::vector<uint8_t> every_value_type_file() {
    GgufBuilder b;
    b.kv<uint8_t>("t.u8", gguf_test::kU8, 200)
        .kv<int8_t>("t.i8", gguf_test::kI8, -5)
        .kv<uint16_t>("t.u16", gguf_test::kU16, 60000)
        .kv<int16_t>("t.i16", gguf_test::kI16, -30000)
        .kv_u32("t.u32", 4000000000u)
        .kv_i32("t.i32", -7)
        .kv_f32("t.f32", 0.25f)
        .kv_bool("t.bool", true)
        .kv_bool("t.false", false)
        .kv_string("t.string", "h\xE2\x96\x81llo")  // "h▁llo": UTF-8 passes through untouched
        .kv_string("t.empty", "")
        .kv<uint64_t>("t.u64", gguf_test::kU64, 0xFFFFFFFFFFFFFFFFull)
        .kv<int64_t>("t.i64", gguf_test::kI64, std::numeric_limits<int64_t>::min())
        .kv<double>("t.f64", gguf_test::kF64, -1.5e-300)
        .kv_string_array("t.pieces", {"<unk>", "\xE2\x96\x81the", "", "s"})
        .kv_array<int32_t>("t.durations", gguf_test::kI32, {0, 1, 2, 3, 4})
        .kv_array<float>("t.floats", gguf_test::kF32, {1.0f, -2.5f})
        .kv_array<uint8_t>("t.bytes", gguf_test::kU8, {7})
        .kv_array<uint64_t>("t.empty_array", gguf_test::kU64, {});
    // An array of two arrays of u16: [[1, 2], []].
    gguf_test::Bytes nested;
    nested.u32(gguf_test::kArray).u64(2);
    nested.u32(gguf_test::kU16).u64(2).put<uint16_t>(1).put<uint16_t>(2);
    nested.u32(gguf_test::kU16).u64(0);
    b.kv_raw("t.nested", gguf_test::kArray, nested.b);
    return b.build();
}

TEST(GgufReader, ReadsEveryValueType) {
    Loaded f(every_value_type_file());
    const GgufReader& r = f.reader;
    EXPECT_EQ(r.version(), 3u);
    EXPECT_EQ(r.get_u32("t.u8"), 200u);
    EXPECT_EQ(r.get_i32("t.i8"), -5);
    EXPECT_EQ(r.get_u32("t.u16"), 60000u);
    EXPECT_EQ(r.get_i32("t.i16"), -30000);
    EXPECT_EQ(r.get_u32("t.u32"), 4000000000u);
    EXPECT_EQ(r.get_i32("t.i32"), -7);
    EXPECT_EQ(r.get_f32("t.f32"), 0.25f);
    EXPECT_TRUE(r.get_bool("t.bool"));
    EXPECT_FALSE(r.get_bool("t.false"));
    EXPECT_EQ(r.get_string("t.string"), "h\xE2\x96\x81llo");
    EXPECT_EQ(r.get_string("t.empty"), "");
    EXPECT_EQ(r.get_u64("t.u64"), 0xFFFFFFFFFFFFFFFFull);
    EXPECT_EQ(r.get_i64("t.i64"), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(r.get_f64("t.f64"), -1.5e-300);
    EXPECT_EQ(r.get_string_array("t.pieces"),
              (std::vector<std::string>{"<unk>", "\xE2\x96\x81the", "", "s"}));
    EXPECT_EQ(r.get_i64_array("t.durations"), (std::vector<int64_t>{0, 1, 2, 3, 4}));
    EXPECT_EQ(r.get_f32_array("t.floats"), (std::vector<float>{1.0f, -2.5f}));
    EXPECT_EQ(r.get_i64_array("t.bytes"), (std::vector<int64_t>{7}));
    EXPECT_EQ(r.get_f32_array("t.durations"), (std::vector<float>{0, 1, 2, 3, 4}));
    EXPECT_TRUE(r.get_i64_array("t.empty_array").empty());
}

TEST(GgufReader, ListsKeysInFileOrderWithTypesAndCounts) {
    Loaded f(every_value_type_file());
    const GgufReader& r = f.reader;
    ASSERT_EQ(r.keys().size(), 20u);
    EXPECT_EQ(r.keys()[0].name, "t.u8");
    EXPECT_EQ(r.keys()[0].type, GgufValueType::U8);
    EXPECT_EQ(r.keys()[0].count, 1u);
    const pk::GgufKeyInfo* pieces = r.find_key("t.pieces");
    ASSERT_NE(pieces, nullptr);
    EXPECT_EQ(pieces->type, GgufValueType::Array);
    EXPECT_EQ(pieces->elem_type, GgufValueType::String);
    EXPECT_EQ(pieces->count, 4u);
    const pk::GgufKeyInfo* nested = r.find_key("t.nested");
    ASSERT_NE(nested, nullptr);
    EXPECT_EQ(nested->elem_type, GgufValueType::Array);
    EXPECT_EQ(nested->count, 2u);
    EXPECT_EQ(r.keys().back().name, "t.nested");
    EXPECT_TRUE(r.has_key("t.f64"));
    EXPECT_FALSE(r.has_key("t.f6"));
    EXPECT_EQ(r.find_key("missing"), nullptr);
    EXPECT_TRUE(r.tensors().empty());
}

TEST(GgufReader, IntegerGettersAcceptEveryIntegerTypeAndCheckTheRange) {
    Loaded f(every_value_type_file());
    const GgufReader& r = f.reader;
    for (const char* k : {"t.u8", "t.i8", "t.u16", "t.i16", "t.u32", "t.i32"}) {
        EXPECT_NO_THROW(r.get_i64(k)) << k;
    }
    EXPECT_EQ(r.get_i64("t.i8"), -5);
    EXPECT_EQ(r.get_u64("t.u32"), 4000000000u);
    EXPECT_EQ(r.get_f64("t.i32"), -7.0);  // float getters take integers too
    EXPECT_EQ(r.get_f32("t.u16"), 60000.0f);
    expect_error([&] { r.get_u32("t.i32"); }, "mem.gguf: key t.i32 = -7 does not fit in u32");
    expect_error([&] { r.get_u64("t.i8"); }, "key t.i8 = -5 does not fit in u64");
    expect_error([&] { r.get_i32("t.u32"); }, "key t.u32 = 4000000000 does not fit in i32");
    expect_error([&] { r.get_i64("t.u64"); }, "key t.u64 = 18446744073709551615 does not fit in i64");
    expect_error([&] { r.get_i32("t.i64"); }, "key t.i64 = -9223372036854775808 does not fit in i32");
}

TEST(GgufReader, GettersRejectTheWrongTypeWithAClearMessage) {
    Loaded f(every_value_type_file());
    const GgufReader& r = f.reader;
    expect_error([&] { r.get_i64("t.string"); }, "mem.gguf: key t.string has type string, expected an integer");
    expect_error([&] { r.get_u32("t.f32"); }, "key t.f32 has type f32, expected an integer");
    expect_error([&] { r.get_f32("t.bool"); }, "key t.bool has type bool, expected a number");
    expect_error([&] { r.get_bool("t.u8"); }, "key t.u8 has type u8, expected bool");
    expect_error([&] { r.get_string("t.pieces"); }, "key t.pieces has type array of string, expected string");
    expect_error([&] { r.get_string_array("t.floats"); },
                 "key t.floats is an array of f32, expected an array of strings");
    expect_error([&] { r.get_i64_array("t.floats"); },
                 "key t.floats is an array of f32, expected an array of integers");
    expect_error([&] { r.get_f32_array("t.pieces"); },
                 "key t.pieces is an array of string, expected an array of numbers");
    expect_error([&] { r.get_i64_array("t.nested"); },
                 "key t.nested is an array of array, expected an array of integers");
    expect_error([&] { r.get_i64_array("t.u32"); }, "key t.u32 has type u32, expected an array of integers");
    expect_error([&] { r.get_u32("parakeet.encoder.d_model"); }, "mem.gguf: key parakeet.encoder.d_model not found");
}

TEST(GgufReader, ArrayGettersCheckEachElement) {
    Loaded f(GgufBuilder()
                 .kv_array<uint64_t>("big", gguf_test::kU64, {1, 0x8000000000000000ull})
                 .kv_array<double>("wide", gguf_test::kF64, {0.5, 1e300})
                 .build());
    expect_error([&] { f.reader.get_i64_array("big"); }, "key big[1] = 9223372036854775808 does not fit in i64");
    expect_error([&] { f.reader.get_f32_array("wide"); }, "key wide[1] =");
    expect_error([&] { f.reader.get_f32_array("wide"); }, "does not fit in f32");
}

TEST(GgufReader, ReadsTensorsOfEverySupportedTypeByteForByte) {
    const auto f32 = random_bytes(3 * 2 * 4, 1);      // [3, 2] f32: odd row length
    const auto f16 = random_bytes(5 * 2, 2);          // [5] f16
    const auto q8 = random_bytes(3 * 2 * 34, 3);      // [64, 3] q8_0: 2 blocks per row
    const auto one = random_bytes(4, 4);              // [1] f32: size 1
    const auto four_d = random_bytes(2 * 3 * 1 * 2 * 2, 5);  // [2, 3, 1, 2] f16
    const std::vector<uint8_t> bytes = GgufBuilder()
                                           .kv_string("general.architecture", "parakeet")
                                           .tensor("encoder.layers.0.w", gguf_test::kTypeF32, {3, 2}, f32)
                                           .tensor("h", gguf_test::kTypeF16, {5}, f16)
                                           .tensor("joint.enc.weight", gguf_test::kTypeQ8_0, {64, 3}, q8)
                                           .tensor("one", gguf_test::kTypeF32, {1}, one)
                                           .tensor("four_d", gguf_test::kTypeF16, {2, 3, 1, 2}, four_d)
                                           .build();
    Loaded f(bytes);
    const GgufReader& r = f.reader;
    ASSERT_EQ(r.tensors().size(), 5u);
    EXPECT_EQ(r.get_string("general.architecture"), "parakeet");

    const pk::GgufTensor& a = r.tensor("encoder.layers.0.w");
    EXPECT_EQ(a.type, pk::GgmlType::F32);
    EXPECT_EQ(a.n_dims, 2);
    EXPECT_EQ(a.ne, (std::array<int64_t, 4>{3, 2, 1, 1}));
    EXPECT_EQ(a.n_elements, 6);
    EXPECT_EQ(a.n_bytes, 24u);
    EXPECT_EQ(a.n_rows(), 2);
    EXPECT_EQ(a.row_bytes(), 12u);
    EXPECT_EQ(a.offset, 0u);
    EXPECT_EQ(a.shape_string(), "[3, 2]");
    EXPECT_EQ(std::memcmp(a.data, f32.data(), f32.size()), 0);
    EXPECT_EQ(a.data, f.bytes.data() + r.data_offset());

    const pk::GgufTensor& h = r.tensor("h");
    EXPECT_EQ(h.type, pk::GgmlType::F16);
    EXPECT_EQ(h.n_bytes, 10u);
    EXPECT_EQ(h.offset, 32u);  // after a's 24 bytes, aligned to 32
    EXPECT_EQ(std::memcmp(h.data, f16.data(), f16.size()), 0);

    const pk::GgufTensor& q = r.tensor("joint.enc.weight");
    EXPECT_EQ(q.type, pk::GgmlType::Q8_0);
    EXPECT_EQ(q.n_elements, 192);
    EXPECT_EQ(q.n_bytes, 204u);
    EXPECT_EQ(q.row_bytes(), 68u);
    EXPECT_EQ(std::memcmp(q.data, q8.data(), q8.size()), 0);

    const pk::GgufTensor& o = r.tensor("one");
    EXPECT_EQ(o.n_elements, 1);
    EXPECT_EQ(std::memcmp(o.data, one.data(), 4), 0);

    const pk::GgufTensor& d = r.tensor("four_d");
    EXPECT_EQ(d.n_dims, 4);
    EXPECT_EQ(d.n_elements, 12);
    EXPECT_EQ(d.n_rows(), 6);
    EXPECT_EQ(d.shape_string(), "[2, 3, 1, 2]");
    EXPECT_EQ(std::memcmp(d.data, four_d.data(), four_d.size()), 0);

    for (const pk::GgufTensor& t : r.tensors()) {
        EXPECT_EQ(t.offset % 32, 0u) << t.name;
        EXPECT_EQ(r.find_tensor(t.name), &t);
    }
    EXPECT_EQ(r.tensors()[2].name, "joint.enc.weight");  // file order
    EXPECT_EQ(r.find_tensor("nope"), nullptr);
    expect_error([&] { r.tensor("decoder.prediction.embed.weight"); },
                 "mem.gguf: tensor decoder.prediction.embed.weight not found");
}

TEST(GgufReader, AcceptsScalarTensorsAndOverlappingData) {
    gguf_test::TensorSpec scalar;
    scalar.name = "scalar";
    scalar.ne = {};
    scalar.data = {0, 0, 0x80, 0x3f};  // 1.0f
    gguf_test::TensorSpec alias;
    alias.name = "alias";
    alias.ne = {1};
    alias.offset = 0;  // same bytes as "scalar"
    Loaded f(GgufBuilder().tensor(scalar).tensor(alias).build());
    const pk::GgufTensor& s = f.reader.tensor("scalar");
    EXPECT_EQ(s.n_dims, 0);
    EXPECT_EQ(s.n_elements, 1);
    EXPECT_EQ(s.shape_string(), "[]");
    float v;
    std::memcpy(&v, s.data, 4);
    EXPECT_EQ(v, 1.0f);
    EXPECT_EQ(f.reader.tensor("alias").data, s.data);
}

TEST(GgufReader, HonoursGeneralAlignment) {
    for (uint32_t alignment : {1u, 8u, 64u, 4096u}) {
        const auto t0 = random_bytes(12, 6);
        const auto t1 = random_bytes(68, 7);
        Loaded f(GgufBuilder()
                     .alignment(alignment)
                     .tensor("a", gguf_test::kTypeF32, {3}, t0)
                     .tensor("b", gguf_test::kTypeQ8_0, {64}, t1)
                     .build());
        const GgufReader& r = f.reader;
        EXPECT_EQ(r.alignment(), alignment);
        EXPECT_EQ(r.data_offset() % alignment, 0u);
        EXPECT_EQ(r.tensor("b").offset, (12 + alignment - 1) / alignment * alignment);
        EXPECT_EQ(std::memcmp(r.tensor("a").data, t0.data(), t0.size()), 0);
        EXPECT_EQ(std::memcmp(r.tensor("b").data, t1.data(), t1.size()), 0);
    }
}

TEST(GgufReader, DefaultAlignmentIs32AndVersion2IsAccepted) {
    Loaded f(GgufBuilder().version(2).tensor("a", gguf_test::kTypeF16, {1}, {1, 2}).build());
    EXPECT_EQ(f.reader.version(), 2u);
    EXPECT_EQ(f.reader.alignment(), 32u);
    EXPECT_EQ(f.reader.data_offset() % 32, 0u);
}

TEST(GgufReader, OpensAFileByPathAndKeepsTheMappingAcrossMoves) {
    const auto q8 = random_bytes(34, 8);
    const std::string path = write_temp_file(
        GgufBuilder().kv_u32("parakeet.vocab_size", 1024).tensor("w", gguf_test::kTypeQ8_0, {32}, q8).build(),
        "gguf_open");
    GgufReader moved = [&] {
        GgufReader r = GgufReader::open(path);
        EXPECT_EQ(r.name(), path);
        return r;
    }();
    GgufReader r = std::move(moved);
    EXPECT_EQ(r.get_u32("parakeet.vocab_size"), 1024u);
    const pk::GgufTensor& w = r.tensor("w");
    EXPECT_EQ(reinterpret_cast<uintptr_t>(w.data) % 32, 0u);  // mapping is page aligned
    EXPECT_EQ(std::memcmp(w.data, q8.data(), q8.size()), 0);
    EXPECT_EQ(r.file_size(), r.data_offset() + 34);
    std::remove(path.c_str());
}

TEST(GgufReader, OpenReportsFilesThatCannotBeMapped) {
    const std::string missing = ::testing::TempDir() + "no_such_model.gguf";
    expect_error([&] { GgufReader::open(missing); }, missing + ": cannot open: No such file or directory");
    expect_error([&] { GgufReader::open(::testing::TempDir()); }, "not a regular file");
    const std::string empty = write_temp_file({}, "gguf_empty");
    expect_error([&] { GgufReader::open(empty); }, empty + ": file is empty");
    std::remove(empty.c_str());
    const std::string junk = write_temp_file({'P', 'K', 3, 4, 0, 0, 0, 0}, "gguf_junk");
    expect_error([&] { GgufReader::open(junk); }, junk + ": not a GGUF file");
    std::remove(junk.c_str());
}

TEST(GgufReader, ErrorHelperPrefixesTheFileName) {
    Loaded f(GgufBuilder().build());
    EXPECT_STREQ(f.reader.error("tensor x has shape [3], expected [4]").what(),
                 "mem.gguf: tensor x has shape [3], expected [4]");
}

TEST(GgufTypes, NamesGgmlTypesIncludingUnsupportedOnes) {
    EXPECT_STREQ(pk::ggml_type_name(0), "f32");
    EXPECT_STREQ(pk::ggml_type_name(8), "q8_0");
    EXPECT_STREQ(pk::ggml_type_name(12), "q4_K");
    EXPECT_STREQ(pk::ggml_type_name(14), "q6_K");
    EXPECT_STREQ(pk::ggml_type_name(30), "bf16");
    EXPECT_EQ(pk::ggml_type_name(4), nullptr);  // retired Q4_2
    EXPECT_EQ(pk::ggml_type_name(1000), nullptr);
    for (uint32_t id : {0u, 1u, 2u, 3u, 6u, 7u, 8u, 12u, 13u, 14u}) EXPECT_TRUE(pk::ggml_type_supported(id)) << id;
    for (uint32_t id : {4u, 9u, 10u, 11u, 15u, 30u}) EXPECT_FALSE(pk::ggml_type_supported(id)) << id;
    EXPECT_EQ(pk::ggml_type_layout(pk::GgmlType::Q8_0).block_bytes, 34u);
    EXPECT_EQ(pk::ggml_type_layout(pk::GgmlType::Q4_K).block_bytes, 144u);
    EXPECT_EQ(pk::ggml_type_layout(pk::GgmlType::Q6_K).block_elems, 256);
    EXPECT_STREQ(pk::gguf_value_type_name(12), "f64");
    EXPECT_EQ(pk::gguf_value_type_name(13), nullptr);
}

}  // namespace
