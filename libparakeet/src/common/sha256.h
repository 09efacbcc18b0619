// SHA-256 (FIPS 180-4), for the fingerprints that tie stored speaker embeddings to the exact
// encoder weights that made them ("sha256:<64 hex>").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace pk {

class Sha256 {
public:
    Sha256();
    void update(const void* data, size_t n);
    // The digest of everything updated so far; the object must not be updated afterwards.
    std::array<uint8_t, 32> finish();

private:
    void block(const uint8_t* p);

    std::array<uint32_t, 8> h_;
    std::array<uint8_t, 64> buf_{};
    size_t buffered_ = 0;
    uint64_t total_ = 0;
};

// Lowercase hex of a digest.
std::string digest_hex(const std::array<uint8_t, 32>& digest);
// Lowercase hex of the SHA-256 of data[0..n).
std::string sha256_hex(const void* data, size_t n);

}  // namespace pk
