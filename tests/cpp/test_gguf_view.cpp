// GgufReader::prefixed_view: a bundle component's keys and tensors under their own names, in
// file order, pointing into the one mapping, which the view keeps alive after the reader it
// came from is gone.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "gguf/gguf_reader.h"
#include "gguf_test_builder.h"

namespace {

std::string write_file(const std::vector<uint8_t>& bytes) {
    const std::string path = testing::TempDir() + "view.gguf";
    std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()),
                                                static_cast<std::streamsize>(bytes.size()));
    return path;
}

std::vector<uint8_t> two_components() {
    return gguf_test::GgufBuilder()
        .kv_string("general.architecture", "parakeet-bundle")
        .kv_u32("a.n", 7)
        .kv_string("b.name", "bee")
        .kv_string("a.name", "ay")
        .tensor("b.w", gguf_test::kTypeF32, {1}, {1, 2, 3, 4})
        .tensor("a.x", gguf_test::kTypeF32, {2}, {5, 6, 7, 8, 9, 10, 11, 12})
        .tensor("a.y", gguf_test::kTypeF32, {1}, {13, 14, 15, 16})
        .build();
}

TEST(GgufView, HoldsThePrefixedKeysAndTensorsUnderTheirOwnNames) {
    const pk::GgufReader r = pk::GgufReader::open(write_file(two_components()));
    const pk::GgufReader a = r.prefixed_view("a.", "bundle:a");
    EXPECT_EQ(a.name(), "bundle:a");
    ASSERT_EQ(a.keys().size(), 2u);
    EXPECT_EQ(a.keys()[0].name, "n");
    EXPECT_EQ(a.keys()[1].name, "name");
    EXPECT_EQ(a.get_u32("n"), 7u);
    EXPECT_EQ(a.get_string("name"), "ay");
    EXPECT_FALSE(a.has_key("general.architecture"));
    ASSERT_EQ(a.tensors().size(), 2u);
    EXPECT_EQ(a.tensors()[0].name, "x");
    EXPECT_EQ(a.tensor("y").data, r.tensor("a.y").data);  // the same bytes, not a copy
    EXPECT_EQ(a.find_tensor("w"), nullptr);
    EXPECT_EQ(a.alignment(), r.alignment());
}

TEST(GgufView, KeepsTheMappingAfterItsReaderIsGone) {
    std::optional<pk::GgufReader> r(pk::GgufReader::open(write_file(two_components())));
    const pk::GgufReader b = r->prefixed_view("b.", "bundle:b");
    r.reset();
    const uint8_t want[] = {1, 2, 3, 4};
    EXPECT_EQ(std::memcmp(b.tensor("w").data, want, sizeof want), 0);
    EXPECT_EQ(b.get_string("name"), "bee");
}

TEST(GgufView, APrefixThatMatchesNothingIsAnError) {
    const pk::GgufReader r = pk::GgufReader::open(write_file(two_components()));
    try {
        r.prefixed_view("c.", "bundle:c");
        FAIL() << "no error";
    } catch (const pk::GgufError& e) {
        EXPECT_NE(std::string(e.what()).find(": no key or tensor is stored under the prefix 'c.'"), std::string::npos)
            << e.what();
    }
}

}  // namespace
