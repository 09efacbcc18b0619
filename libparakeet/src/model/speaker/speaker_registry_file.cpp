#include "model/speaker/speaker_registry_file.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "common/errors.h"

namespace pk::speaker {

namespace {

constexpr char kMagic[4] = {'P', 'K', 'S', 'R'};
// Far above any real registry; a corrupt count or length fails here instead of allocating.
constexpr uint32_t kMaxString = 1 << 16;
constexpr uint32_t kMaxDim = 1 << 16;

void put_u32(std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out += static_cast<char>((v >> (8 * i)) & 0xff);
}
void put_string(std::string& out, const std::string& s) {
    put_u32(out, static_cast<uint32_t>(s.size()));
    out += s;
}

// Reads the file's bytes in order, refusing to run past the end.
class Reader {
public:
    // Both strings must outlive the reader.
    Reader(const std::string& path, const std::string& bytes) : path_(path), bytes_(bytes) {}
    uint32_t u32() {
        const unsigned char* p = take(4);
        return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
    }
    int32_t i32() { return static_cast<int32_t>(u32()); }
    float f32() {
        const uint32_t bits = u32();
        float f;
        std::memcpy(&f, &bits, 4);
        return f;
    }
    std::string string() {
        const uint32_t n = u32();
        if (n > kMaxString) fail("a string of " + std::to_string(n) + " bytes");
        return std::string(reinterpret_cast<const char*>(take(n)), n);
    }
    const unsigned char* take(size_t n) {
        if (bytes_.size() - at_ < n) fail("truncated");
        const unsigned char* p = reinterpret_cast<const unsigned char*>(bytes_.data()) + at_;
        at_ += n;
        return p;
    }
    bool at_end() const { return at_ == bytes_.size(); }
    [[noreturn]] void fail(const std::string& why) const {
        throw InvalidArgument(path_ + ": not a usable speaker registry file (" + why + ")");
    }

private:
    const std::string& path_;
    const std::string& bytes_;
    size_t at_ = 0;
};

}  // namespace

void save_registry(const SpeakerRegistry& registry, const std::string& path) {
    const bool fingerprinted = !registry.fingerprint().empty();
    std::string out(kMagic, 4);
    put_u32(out, fingerprinted ? 2 : 1);
    put_u32(out, static_cast<uint32_t>(registry.dim()));
    put_u32(out, static_cast<uint32_t>(registry.size()));
    if (fingerprinted) {
        put_string(out, registry.fingerprint().family);
        put_string(out, registry.fingerprint().weights);
    }
    for (const RegisteredSpeaker& s : registry.speakers()) {
        put_string(out, s.name);
        put_u32(out, static_cast<uint32_t>(s.count));
        for (float v : s.sum) {
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            put_u32(out, bits);
        }
    }
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
        f.write(out.data(), static_cast<std::streamsize>(out.size()));
        f.flush();
        if (!f) {
            std::remove(tmp.c_str());
            throw InvalidArgument("cannot write the speaker registry file " + tmp);
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        std::remove(tmp.c_str());
        throw InvalidArgument("cannot rename " + tmp + " to " + path);
    }
}

SpeakerRegistry load_registry(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) throw InvalidArgument("cannot open the speaker registry file " + path);
    std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    if (bytes.size() < 4 || bytes.compare(0, 4, kMagic, 4) != 0)
        throw InvalidArgument(path + ": not a usable speaker registry file (no PKSR header)");
    Reader r(path, bytes);
    r.take(4);
    const uint32_t version = r.u32();
    if (version != 1 && version != 2) r.fail("unknown version " + std::to_string(version));
    const int32_t dim = r.i32();
    const uint32_t n = r.u32();
    if (dim < 0 || static_cast<uint32_t>(dim) > kMaxDim || (n > 0 && dim == 0))
        r.fail("dimension " + std::to_string(dim));
    EncoderFingerprint fp;
    if (version == 2) {
        fp.family = r.string();
        fp.weights = r.string();
    }
    std::vector<RegisteredSpeaker> speakers;
    for (uint32_t i = 0; i < n; ++i) {
        RegisteredSpeaker s;
        s.name = r.string();
        s.count = r.i32();
        s.sum.resize(dim);
        for (int32_t k = 0; k < dim; ++k) s.sum[k] = r.f32();
        speakers.push_back(std::move(s));
    }
    if (!r.at_end()) r.fail("trailing bytes");
    try {
        return SpeakerRegistry::restore(dim, std::move(fp), std::move(speakers));
    } catch (const InvalidArgument& e) {
        r.fail(e.what());
    }
}

}  // namespace pk::speaker
