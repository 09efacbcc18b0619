// Seeded random mutation of valid GGUF files: flipped bits, overwritten fields, inserted,
// deleted and duplicated bytes, truncations. Every mutant must either load — and then every
// value and every tensor byte it exposes must be readable and inside the image — or be
// rejected with a GgufError that names the file. Anything else (a crash, another exception,
// an over-read caught by AddressSanitizer in the sanitizer build) fails the test. The
// generator is a fixed-seed splitmix64, so a failure names an iteration that replays exactly.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"

namespace {

using gguf_test::Bytes;
using gguf_test::GgufBuilder;
using pk::GgufError;
using pk::GgufReader;
using pk::GgufValueType;

// splitmix64: tiny, and the same sequence on every platform (unlike std distributions).
struct Rng {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
    size_t below(size_t n) { return n == 0 ? 0 : static_cast<size_t>(next() % n); }
};

std::vector<uint8_t> pattern(size_t n, uint8_t start) {
    std::vector<uint8_t> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(start + i * 7);
    return v;
}

// Valid starting points that between them use every value type, nesting, each tensor type,
// a custom alignment and version 2.
std::vector<std::vector<uint8_t>> seeds() {
    std::vector<std::vector<uint8_t>> s;
    s.push_back(GgufBuilder()
                    .kv_string("general.architecture", "parakeet")
                    .kv_string("parakeet.arch", "tdt")
                    .kv_u32("parakeet.encoder.d_model", 176)
                    .kv_i32("parakeet.encoder.n_layers", 2)
                    .kv_f32("parakeet.preprocessor.preemph", 0.97f)
                    .kv_bool("parakeet.encoder.xscaling", true)
                    .kv_string_array("parakeet.tokenizer.pieces", {"<unk>", "\xE2\x96\x81" "the", "s", ""})
                    .kv_array<int32_t>("parakeet.tdt.durations", gguf_test::kI32, {0, 1, 2, 3, 4})
                    .tensor("encoder.layers.0.norm.weight", gguf_test::kTypeF32, {5}, pattern(20, 1))
                    .tensor("encoder.layers.0.ff.weight", gguf_test::kTypeF16, {3, 2}, pattern(12, 2))
                    .tensor("joint.enc.weight", gguf_test::kTypeQ8_0, {64, 2}, pattern(136, 3))
                    .build());
    Bytes nested;
    nested.u32(gguf_test::kArray).u64(2);
    nested.u32(gguf_test::kString).u64(1).str("x");
    nested.u32(gguf_test::kF64).u64(1).put(2.5);
    s.push_back(GgufBuilder()
                    .alignment(64)
                    .kv<uint8_t>("u8", gguf_test::kU8, 9)
                    .kv<int8_t>("i8", gguf_test::kI8, -9)
                    .kv<uint16_t>("u16", gguf_test::kU16, 999)
                    .kv<int16_t>("i16", gguf_test::kI16, -999)
                    .kv<uint64_t>("u64", gguf_test::kU64, 1ull << 40)
                    .kv<int64_t>("i64", gguf_test::kI64, -(1ll << 40))
                    .kv<double>("f64", gguf_test::kF64, 0.125)
                    .kv_array<uint8_t>("bools", gguf_test::kBool, {1, 0, 1})
                    .kv_array<float>("floats", gguf_test::kF32, {1.5f, -2.0f})
                    .kv_raw("nested", gguf_test::kArray, nested.b)
                    .tensor("a", gguf_test::kTypeQ8_0, {32}, pattern(34, 4))
                    .tensor("b", gguf_test::kTypeF32, {1, 1, 1, 3}, pattern(12, 5))
                    .build());
    s.push_back(GgufBuilder()
                    .version(2)
                    .kv_u32("general.alignment", 32)
                    .tensor("scalar", gguf_test::kTypeF32, {}, pattern(4, 6))
                    .build());
    return s;
}

void overwrite(std::vector<uint8_t>& b, size_t pos, const void* src, size_t n) {
    if (b.size() < n) return;
    pos = pos % (b.size() - n + 1);
    std::memcpy(b.data() + pos, src, n);
}

// One random change to `b`.
void mutate(std::vector<uint8_t>& b, Rng& rng) {
    static const uint32_t kU32s[] = {0, 1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 31, 32, 33, 64, 0x7fffffff, 0x80000000,
                                     0xffffffff};
    switch (rng.below(8)) {
        case 0:  // flip one bit
            if (!b.empty()) b[rng.below(b.size())] ^= static_cast<uint8_t>(1u << rng.below(8));
            break;
        case 1:  // one random byte
            if (!b.empty()) b[rng.below(b.size())] = static_cast<uint8_t>(rng.next());
            break;
        case 2: {  // a u32 field (type ids, dimension counts) set to a telling value
            const uint32_t v = kU32s[rng.below(sizeof(kU32s) / sizeof(kU32s[0]))];
            overwrite(b, rng.below(b.size()), &v, 4);
            break;
        }
        case 3: {  // a u64 field (counts, lengths, dims, offsets) set to a telling value
            const uint64_t vals[] = {0, 1, 31, 32, 33, b.size(), b.size() - 1, b.size() + 1,
                                     1ull << 32, 1ull << 62, 1ull << 63, ~0ull, rng.next()};
            const uint64_t v = vals[rng.below(sizeof(vals) / sizeof(vals[0]))];
            overwrite(b, rng.below(b.size()), &v, 8);
            break;
        }
        case 4: {  // insert random bytes
            const size_t n = 1 + rng.below(16);
            const size_t at = rng.below(b.size() + 1);
            std::vector<uint8_t> ins(n);
            for (auto& x : ins) x = static_cast<uint8_t>(rng.next());
            b.insert(b.begin() + at, ins.begin(), ins.end());
            break;
        }
        case 5: {  // delete bytes
            if (b.empty()) break;
            const size_t at = rng.below(b.size());
            const size_t n = std::min(b.size() - at, 1 + rng.below(16));
            b.erase(b.begin() + at, b.begin() + at + n);
            break;
        }
        case 6:  // truncate
            b.resize(rng.below(b.size() + 1));
            break;
        case 7: {  // copy a chunk over another place (repeats keys, names, whole records)
            if (b.size() < 2) break;
            const size_t from = rng.below(b.size());
            const size_t n = std::min(b.size() - from, 1 + rng.below(48));
            const std::vector<uint8_t> chunk(b.begin() + from, b.begin() + from + n);
            overwrite(b, rng.below(b.size()), chunk.data(), chunk.size());
            break;
        }
    }
}

// Reads everything a loaded reader exposes, the way a model loader would; returns a checksum
// so the reads cannot be optimised away.
uint64_t touch_everything(const GgufReader& r, const std::vector<uint8_t>& image) {
    uint64_t sum = r.version() + r.alignment();
    for (const pk::GgufKeyInfo& k : r.keys()) {
        try {
            switch (k.type) {
                case GgufValueType::String: sum += r.get_string(k.name).size(); break;
                case GgufValueType::Bool: sum += r.get_bool(k.name); break;
                case GgufValueType::F32:
                case GgufValueType::F64: sum += static_cast<uint64_t>(r.get_f64(k.name) != 0); break;
                case GgufValueType::Array:
                    if (k.elem_type == GgufValueType::String) {
                        for (const std::string& s : r.get_string_array(k.name)) sum += s.size();
                    } else if (pk::gguf_value_type_is_integer(k.elem_type)) {
                        sum += r.get_i64_array(k.name).size();
                    } else if (pk::gguf_value_type_is_float(k.elem_type)) {
                        sum += r.get_f32_array(k.name).size();
                    }
                    break;
                default: sum += static_cast<uint64_t>(r.get_i64(k.name)); break;
            }
        } catch (const GgufError& e) {
            // Only range errors are legitimate here (a u64 above the i64 range, an f64 beyond f32).
            EXPECT_NE(std::string(e.what()).find("does not fit in"), std::string::npos) << e.what();
        }
    }
    const uint8_t* begin = image.data();
    const uint8_t* end = begin + image.size();
    for (const pk::GgufTensor& t : r.tensors()) {
        EXPECT_EQ(r.find_tensor(t.name), &t);
        EXPECT_GE(t.n_elements, 1);
        EXPECT_TRUE(t.data >= begin && t.data <= end && t.n_bytes <= static_cast<size_t>(end - t.data))
            << "tensor " << t.name << " points outside the image";
        for (size_t i = 0; i < t.n_bytes; ++i) sum += t.data[i];
    }
    return sum;
}

TEST(GgufMutation, MutantsLoadOrFailCleanly) {
    constexpr int kIterationsPerSeed = 20000;
    const std::vector<std::vector<uint8_t>> originals = seeds();
    Rng rng{0x5eed0000cafef00dull};
    int accepted = 0;
    int rejected = 0;
    uint64_t checksum = 0;
    for (size_t s = 0; s < originals.size(); ++s) {
        ASSERT_NO_THROW(GgufReader::from_buffer(originals[s].data(), originals[s].size(), "seed"));
        for (int it = 0; it < kIterationsPerSeed; ++it) {
            std::vector<uint8_t> bytes = originals[s];
            const size_t n_mutations = 1 + rng.below(4);
            for (size_t m = 0; m < n_mutations; ++m) mutate(bytes, rng);
            const std::vector<uint8_t> image(bytes);  // exactly sized, so ASan sees over-reads
            SCOPED_TRACE("seed " + std::to_string(s) + ", iteration " + std::to_string(it));
            try {
                const GgufReader r = GgufReader::from_buffer(image.data(), image.size(), "mutant.gguf");
                checksum += touch_everything(r, image);
                ++accepted;
            } catch (const GgufError& e) {
                EXPECT_EQ(std::string(e.what()).rfind("mutant.gguf: ", 0), 0u) << e.what();
                ++rejected;
            } catch (const std::exception& e) {
                ADD_FAILURE() << "unexpected exception: " << e.what();
            }
            if (HasFailure()) return;  // stop at the first bad mutant; the trace names it
        }
    }
    // The mutants must exercise both outcomes, or the test is not testing much.
    std::printf("accepted %d rejected %d\n", accepted, rejected);
    EXPECT_GT(accepted, 500) << "checksum " << checksum;
    EXPECT_GT(rejected, 5000);
}

}  // namespace
