// GgufReader on broken and hostile files: each malformation is rejected with a GgufError that
// names the file and the problem, before anything is allocated from a made-up count and
// without reading outside the file (the image is an exactly sized heap copy, so
// AddressSanitizer builds catch any over-read).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"

namespace {

using gguf_test::Bytes;
using gguf_test::GgufBuilder;
using gguf_test::TensorSpec;
using pk::GgufError;
using pk::GgufReader;

constexpr uint32_t kMagic = 0x46554747;

// Loads `bytes` and expects a GgufError whose message starts with the file name and contains
// `needle`.
void expect_rejected(const std::vector<uint8_t>& bytes, const std::string& needle) {
    const std::vector<uint8_t> image(bytes);  // exactly sized
    try {
        GgufReader::from_buffer(image.data(), image.size(), "bad.gguf");
    } catch (const GgufError& e) {
        const std::string msg = e.what();
        EXPECT_EQ(msg.rfind("bad.gguf: ", 0), 0u) << msg;
        EXPECT_NE(msg.find(needle), std::string::npos) << "message: " << msg << "\nexpected: " << needle;
        return;
    }
    ADD_FAILURE() << "file was accepted; expected an error containing: " << needle;
}

// A header followed by `body`, with the given counts.
std::vector<uint8_t> with_header(uint64_t tensor_count, uint64_t kv_count, const Bytes& body,
                                 uint32_t version = 3) {
    Bytes b;
    b.u32(kMagic).u32(version).u64(tensor_count).u64(kv_count).raw(body.b);
    return b.b;
}

std::vector<uint8_t> one_tensor(TensorSpec spec) { return GgufBuilder().tensor(std::move(spec)).build(); }

TensorSpec f32_tensor(std::vector<uint64_t> ne) {
    TensorSpec t;
    t.name = "w";
    t.ne = std::move(ne);
    return t;
}

// A valid file holding a bit of everything, for the truncation sweep.
std::vector<uint8_t> rich_file() {
    return GgufBuilder()
        .kv_string("general.architecture", "parakeet")
        .kv_u32("parakeet.encoder.d_model", 176)
        .kv_string_array("parakeet.tokenizer.pieces", {"<unk>", "\xE2\x96\x81" "a", "b"})
        .kv_array<int32_t>("parakeet.tdt.durations", gguf_test::kI32, {0, 1, 2})
        .kv_bool("parakeet.encoder.xscaling", true)
        .tensor("a", gguf_test::kTypeF32, {3}, std::vector<uint8_t>(12, 1))
        .tensor("b", gguf_test::kTypeQ8_0, {32}, std::vector<uint8_t>(34, 2))
        .build();
}

// ---- header --------------------------------------------------------------------------------

TEST(GgufHostile, WrongMagic) {
    expect_rejected(GgufBuilder().magic(0x4c4d4747).build(), "not a GGUF file: it starts with \"GGML\"");
    expect_rejected({0x7f, 'E', 'L', 'F', 2, 1, 1, 0}, "it starts with bytes 7f 45 4c 46 instead of \"GGUF\"");
}

TEST(GgufHostile, TooShortForTheMagic) {
    expect_rejected({}, "not a GGUF file: it has only 0 bytes");
    expect_rejected({'G', 'G', 'U'}, "not a GGUF file: it has only 3 bytes");
}

TEST(GgufHostile, UnsupportedVersions) {
    expect_rejected(GgufBuilder().version(1).build(), "unsupported GGUF version 1 (this reader reads versions 2 and 3)");
    expect_rejected(GgufBuilder().version(4).build(), "unsupported GGUF version 4");
    expect_rejected(GgufBuilder().version(0x03000000).build(), "big-endian GGUF files (version 3) are not supported");
}

TEST(GgufHostile, TruncatedHeader) {
    expect_rejected({'G', 'G', 'U', 'F', 3, 0}, "file is truncated: the version of the header needs 4 bytes at offset 4");
    std::vector<uint8_t> b = GgufBuilder().build();
    b.resize(20);
    expect_rejected(b, "file is truncated: the key/value count of the header needs 8 bytes at offset 16");
}

TEST(GgufHostile, AbsurdCounts) {
    expect_rejected(GgufBuilder().kv_count(1000000000000000000ull).build(),
                    "the header claims 1000000000000000000 key/value pairs, but the 0 bytes after it");
    expect_rejected(GgufBuilder().tensor_count(~0ull).build(), "the header claims 18446744073709551615 tensors");
    // Plausible but still more than the bytes that follow could hold.
    expect_rejected(GgufBuilder().kv_u32("a", 1).kv_count(2).build(), "claims 2 key/value pairs");
    expect_rejected(GgufBuilder().kv_u32("a", 1).tensor_count(1).build(), "claims 1 tensors");
}

// ---- every truncation of a valid file --------------------------------------------------------

TEST(GgufHostile, EveryTruncationIsRejected) {
    const std::vector<uint8_t> full = rich_file();
    ASSERT_NO_THROW(GgufReader::from_buffer(full.data(), full.size(), "full.gguf"));
    for (size_t n = 0; n < full.size(); ++n) {
        const std::vector<uint8_t> cut(full.begin(), full.begin() + n);
        try {
            GgufReader::from_buffer(cut.data(), cut.size(), "cut.gguf");
            ADD_FAILURE() << "a file cut to " << n << " of " << full.size() << " bytes was accepted";
        } catch (const GgufError& e) {
            const std::string msg = e.what();
            // Depending on where the cut falls, the reader notices a short read, a length or
            // count that the rest cannot hold, or tensor data past the end.
            const bool explained = msg.find("truncated") != std::string::npos ||
                                   msg.find("cannot hold") != std::string::npos ||
                                   msg.find("bytes are left") != std::string::npos ||
                                   msg.find("cannot fit") != std::string::npos ||
                                   msg.find("past the end") != std::string::npos ||
                                   msg.find("only") != std::string::npos;
            EXPECT_TRUE(explained) << "cut at " << n << ": " << msg;
            EXPECT_EQ(msg.rfind("cut.gguf: ", 0), 0u) << msg;
        }
    }
}

TEST(GgufHostile, TruncationMessagesNameTheField) {
    // Cut inside the value type of the first key.
    Bytes kv;
    kv.str("parakeet.arch").u8(8);
    expect_rejected(with_header(0, 1, kv), "file is truncated: the value type of key parakeet.arch needs 4 bytes");
    // Cut inside a tensor's offset.
    Bytes t;
    t.str("w").u32(1).u64(4).u32(0).u32(0);
    expect_rejected(with_header(1, 0, t), "file is truncated: the data offset of tensor w needs 8 bytes");
}

// ---- key/values ------------------------------------------------------------------------------

TEST(GgufHostile, AbsurdStringLengths) {
    Bytes key;
    key.u64(~0ull).raw(std::vector<uint8_t>(16, 0));
    expect_rejected(with_header(0, 1, key),
                    "the key of key/value #0 claims 18446744073709551615 bytes at offset 32, but only 16 bytes are left");
    Bytes value;
    value.str("general.name").u32(gguf_test::kString).u64(1ull << 40).u8('x');
    expect_rejected(with_header(0, 1, value), "a string value of key general.name claims 1099511627776 bytes");
    Bytes name;
    name.u64(1ull << 62).raw(std::vector<uint8_t>(24, 0));
    expect_rejected(with_header(1, 0, name), "the name of tensor info #0 claims 4611686018427387904 bytes");
}

TEST(GgufHostile, AbsurdArrayLengths) {
    Bytes p;
    p.u32(gguf_test::kU32).u64(1ull << 61).u32(7);
    expect_rejected(GgufBuilder().kv_raw("k", gguf_test::kArray, p.b).build(),
                    "key k: array of 2305843009213693952 u32 values cannot fit in the 4 bytes left");
    Bytes s;
    s.u32(gguf_test::kString).u64(1000).str("only one");
    expect_rejected(GgufBuilder().kv_raw("k", gguf_test::kArray, s.b).build(), "array of 1000 string values cannot fit");
    Bytes s2;  // plausible count, but the strings run out
    s2.u32(gguf_test::kString).u64(3).str("a long first string").str("second");
    expect_rejected(GgufBuilder().kv_raw("k", gguf_test::kArray, s2.b).build(), "file is truncated: a string value of key k");
}

TEST(GgufHostile, DuplicateAndEmptyKeys) {
    expect_rejected(GgufBuilder().kv_u32("parakeet.vocab_size", 1).kv_u32("parakeet.vocab_size", 2).build(),
                    "duplicate key parakeet.vocab_size");
    expect_rejected(GgufBuilder().kv_u32("", 1).build(), "key/value #0 has an empty key");
}

TEST(GgufHostile, UnknownValueTypes) {
    expect_rejected(GgufBuilder().kv_raw("k", 13, {0, 0, 0, 0}).build(), "key k has unknown value type 13");
    expect_rejected(GgufBuilder().kv_raw("k", 0xFFFFFFFF, {}).build(), "key k has unknown value type 4294967295");
    Bytes p;
    p.u32(99).u64(1).u32(0);
    expect_rejected(GgufBuilder().kv_raw("k", gguf_test::kArray, p.b).build(), "key k: array has unknown element type 99");
}

TEST(GgufHostile, BoolsMustBeZeroOrOne) {
    expect_rejected(GgufBuilder().kv("flag", gguf_test::kBool, uint8_t{2}).build(),
                    "key flag: bool value 2 is neither 0 nor 1");
    expect_rejected(GgufBuilder().kv_array<uint8_t>("flags", gguf_test::kBool, {1, 0, 255}).build(),
                    "key flags: bool value 255 is neither 0 nor 1");
}

// An array nested `depth` deep: [[[...[u8 7]...]]]. Each outer level is an element type
// (array) and a count (1) in front of the next level.
std::vector<uint8_t> nested_array(int depth) {
    Bytes p;
    for (int d = 1; d < depth; ++d) p.u32(gguf_test::kArray).u64(1);
    p.u32(gguf_test::kU8).u64(1).u8(7);
    return GgufBuilder().kv_raw("deep", gguf_test::kArray, p.b).build();
}

TEST(GgufHostile, ArrayNestingIsLimited) {
    const std::vector<uint8_t> ok = nested_array(GgufReader::kMaxArrayDepth);
    EXPECT_NO_THROW(GgufReader::from_buffer(ok.data(), ok.size(), "ok.gguf"));
    expect_rejected(nested_array(GgufReader::kMaxArrayDepth + 1), "key deep: arrays nest deeper than 8 levels");
    expect_rejected(nested_array(100000), "arrays nest deeper than 8 levels");
}

TEST(GgufHostile, BadAlignment) {
    const auto t = std::vector<uint8_t>(4, 0);
    expect_rejected(GgufBuilder().alignment(0).tensor("w", gguf_test::kTypeF32, {1}, t).build(),
                    "general.alignment = 0 is not a power of two");
    expect_rejected(GgufBuilder().alignment(48).tensor("w", gguf_test::kTypeF32, {1}, t).build(),
                    "general.alignment = 48 is not a power of two");
    expect_rejected(GgufBuilder().kv_string("general.alignment", "32").build(),
                    "key general.alignment has type string, expected an integer");
    expect_rejected(GgufBuilder().kv<uint64_t>("general.alignment", gguf_test::kU64, 1ull << 32).build(),
                    "key general.alignment = 4294967296 does not fit in u32");
}

// ---- tensor infos ----------------------------------------------------------------------------

TEST(GgufHostile, TooManyDimensions) {
    expect_rejected(one_tensor(f32_tensor({1, 1, 1, 1, 1})), "tensor w has 5 dimensions (at most 4 are supported)");
    TensorSpec t = f32_tensor({});
    t.n_dims = 0xFFFFFFFF;
    expect_rejected(one_tensor(t), "tensor w has 4294967295 dimensions");
}

TEST(GgufHostile, ZeroDimension) { expect_rejected(one_tensor(f32_tensor({4, 0})), "tensor w: dimension 1 is 0"); }

TEST(GgufHostile, ElementCountOverflow) {
    expect_rejected(one_tensor(f32_tensor({1ull << 32, 1ull << 32})),
                    "tensor w: the element count overflows 64 bits (dimension 1 is 4294967296)");
    expect_rejected(one_tensor(f32_tensor({1ull << 63})), "the element count overflows 64 bits (dimension 0 is");
    expect_rejected(one_tensor(f32_tensor({3, 1ull << 62})), "the element count overflows 64 bits");
}

TEST(GgufHostile, ByteSizeOverflow) {
    // 2^62 elements fit in int64, but 2^62 f32 values are 2^64 bytes.
    expect_rejected(one_tensor(f32_tensor({1ull << 31, 1ull << 31})),
                    "tensor w: the byte size of shape [2147483648, 2147483648] overflows");
}

TEST(GgufHostile, UnsupportedTensorTypes) {
    TensorSpec t = f32_tensor({256});
    t.type = gguf_test::kTypeQ2_K;
    expect_rejected(one_tensor(t), "tensor w has type q2_K (10), which is not supported (supported: f32, f16, q4_0");
    t.type = 99;
    expect_rejected(one_tensor(t), "tensor w has unknown ggml type 99");
    t.type = 4;  // retired Q4_2
    expect_rejected(one_tensor(t), "tensor w has unknown ggml type 4");
}

TEST(GgufHostile, QuantisedRowsMustHoldWholeBlocks) {
    TensorSpec t = f32_tensor({33, 2});
    t.type = gguf_test::kTypeQ8_0;
    expect_rejected(one_tensor(t), "tensor w: row length 33 is not a multiple of the q8_0 block size 32");
}

TEST(GgufHostile, DuplicateAndEmptyTensorNames) {
    const auto d = std::vector<uint8_t>(4, 0);
    expect_rejected(GgufBuilder().tensor("w", gguf_test::kTypeF32, {1}, d).tensor("w", gguf_test::kTypeF32, {1}, d).build(),
                    "duplicate tensor name w");
    expect_rejected(GgufBuilder().tensor("", gguf_test::kTypeF32, {1}, d).build(), "tensor #0 has an empty name");
}

TEST(GgufHostile, MisalignedOffset) {
    TensorSpec t = f32_tensor({1});
    t.offset = 4;
    t.data = std::vector<uint8_t>(4, 0);
    expect_rejected(one_tensor(t), "tensor w: data offset 4 is not a multiple of the alignment 32");
}

TEST(GgufHostile, DataPastTheEndOfTheFile) {
    TensorSpec short_data = f32_tensor({16});
    short_data.data = std::vector<uint8_t>(60, 0);  // 4 bytes short
    expect_rejected(one_tensor(short_data),
                    "tensor w: its 64 bytes at data offset 0 run past the end of the file (the data section holds 60 bytes)");
    TensorSpec far = f32_tensor({1});
    far.offset = 1ull << 40;
    expect_rejected(GgufBuilder().tensor("a", gguf_test::kTypeF32, {1}, {0, 0, 0, 0}).tensor(far).build(),
                    "tensor w: its 4 bytes at data offset 1099511627776 run past the end");
    TensorSpec wraps = f32_tensor({1ull << 40});  // offset + size overflows u64
    wraps.offset = ~0ull - 31;
    expect_rejected(one_tensor(wraps), "run past the end of the file");
}

TEST(GgufHostile, DataSectionStartsPastTheEnd) {
    // The infos end, then the padding up to a 1 MiB alignment is missing.
    std::vector<uint8_t> b =
        GgufBuilder().alignment(1u << 20).tensor("w", gguf_test::kTypeF32, {1}, {0, 0, 0, 0}).build();
    b.resize(200);
    expect_rejected(b, "the data section would start at offset 1048576, past the end of the file (200 bytes)");
}

}  // namespace
