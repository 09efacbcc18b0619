// SHA-256 on FIPS 180-4's test vectors, fed whole and in uneven pieces.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "common/sha256.h"

namespace {

TEST(Sha256, KnownAnswers) {
    EXPECT_EQ(pk::sha256_hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    EXPECT_EQ(pk::sha256_hex("abc", 3), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    const std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    EXPECT_EQ(pk::sha256_hex(two_blocks.data(), two_blocks.size()),
              "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, PiecesGiveTheWholeDigest) {
    const std::string million(1000000, 'a');
    pk::Sha256 h;
    for (size_t at = 0, step = 1; at < million.size(); at += step, step = step % 97 + 1)
        h.update(million.data() + at, std::min(step, million.size() - at));
    EXPECT_EQ(pk::digest_hex(h.finish()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

}  // namespace
