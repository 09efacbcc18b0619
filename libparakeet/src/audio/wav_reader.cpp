#include "audio/wav_reader.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <sstream>

#include "common/errors.h"
#include "gguf/mapped_file.h"

namespace pk {
namespace {

constexpr uint16_t kFormatPcm = 0x0001;
constexpr uint16_t kFormatFloat = 0x0003;
constexpr uint16_t kFormatExtensible = 0xFFFE;

uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint32_t le32(const uint8_t* p) {
    return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
           (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

const char* format_name(uint16_t tag) {
    switch (tag) {
        case 0x0002: return "Microsoft ADPCM";
        case 0x0006: return "A-law";
        case 0x0007: return "mu-law";
        case 0x0011: return "IMA ADPCM";
        case 0x0031: return "GSM 6.10";
        case 0x0050: return "MPEG";
        case 0x0055: return "MP3";
        default: return "an unsupported encoding";
    }
}

[[noreturn]] void fail(const std::string& name, const std::string& what) {
    throw InvalidAudio(name + ": " + what);
}

// Seconds with three decimals, whatever the C locale (to_chars ignores it).
std::string seconds(double s) {
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof(buf), s, std::chars_format::fixed, 3);
    return std::string(buf, r.ptr);
}

struct Format {
    uint16_t tag = 0;
    int channels = 0;
    int sample_rate = 0;
    int bits = 0;
    int block_align = 0;
};

// "truncated WAV: the header promises 10.000 s of audio (320000 bytes), the file holds 0.001 s
// (16 bytes)": the same words as parakeet_py's reader.
std::string truncation_message(const Format& fmt, uint64_t promised, uint64_t held) {
    const double bytes_per_second = static_cast<double>(fmt.block_align) * fmt.sample_rate;
    return "truncated WAV: the header promises " + seconds(promised / bytes_per_second) + " s of audio (" +
           std::to_string(promised) + " bytes), the file holds " + seconds(held / bytes_per_second) + " s (" +
           std::to_string(held) + " bytes)";
}

Format parse_fmt(const uint8_t* p, uint32_t size, const std::string& name) {
    if (size < 16) fail(name, "WAV 'fmt ' chunk is too short");
    Format f;
    f.tag = le16(p);
    f.channels = le16(p + 2);
    const uint32_t rate = le32(p + 4);
    f.block_align = le16(p + 12);
    f.bits = le16(p + 14);
    if (f.tag == kFormatExtensible) {
        if (size < 40) fail(name, "WAVE_FORMAT_EXTENSIBLE 'fmt ' chunk is too short");
        f.tag = le16(p + 24);  // first two bytes of the sub-format GUID
    }
    if (f.tag != kFormatPcm && f.tag != kFormatFloat) {
        std::ostringstream m;
        m << "WAV data is not PCM: format 0x" << std::hex << f.tag << " (" << format_name(f.tag)
          << "); convert it to PCM or float WAV first";
        fail(name, m.str());
    }
    if (f.channels < 1) fail(name, "WAV header declares no channels");
    // Stored as 32 bits unsigned; anything past int's range is as absurd as 0.
    if (rate < 1 || rate > static_cast<uint32_t>(INT32_MAX))
        fail(name, "WAV header declares a sample rate of " + std::to_string(rate) + " Hz");
    f.sample_rate = static_cast<int>(rate);
    const bool int_ok = f.tag == kFormatPcm && (f.bits == 8 || f.bits == 16 || f.bits == 24 || f.bits == 32);
    const bool float_ok = f.tag == kFormatFloat && (f.bits == 32 || f.bits == 64);
    if (!int_ok && !float_ok)
        fail(name, "unsupported WAV sample size: " + std::to_string(f.bits) + " bits");
    if (f.block_align != f.channels * (f.bits / 8)) fail(name, "inconsistent WAV block alignment");
    return f;
}

float decode_sample(const uint8_t* p, const Format& f) {
    if (f.tag == kFormatFloat) {
        if (f.bits == 32) {
            float v;
            std::memcpy(&v, p, 4);
            return v;
        }
        double v;
        std::memcpy(&v, p, 8);
        return static_cast<float>(v);
    }
    switch (f.bits) {
        case 8: return (static_cast<int>(p[0]) - 128) / 128.0f;
        case 16: return static_cast<int16_t>(le16(p)) / 32768.0f;
        case 24: {
            int32_t v = static_cast<int32_t>(p[0] | (p[1] << 8) | (p[2] << 16));
            if (v & 0x800000) v -= 0x1000000;
            return static_cast<float>(v / 8388608.0);
        }
        default: return static_cast<float>(static_cast<int32_t>(le32(p)) / 2147483648.0);
    }
}

// Decoding a mapped file hands its pages back in blocks of about this many bytes as it goes.
constexpr size_t kReleaseBlockBytes = size_t{4} << 20;

// Decodes `frames` frames from `p` into `out` (resized to `frames`), averaging channels. With
// `release`, the pages of [image, p) are dropped from the process after each block: they are
// file-backed (refaulted from the file if read again), so a long file's bytes and its samples
// are never both resident, only the samples and one block.
void decode_frames(const uint8_t* image, const uint8_t* p, size_t frames, const Format& fmt,
                   bool release, std::vector<float>& out) {
    out.resize(frames);
    const int bytes_per_sample = fmt.bits / 8;
    const size_t block_frames = std::max<size_t>(1, kReleaseBlockBytes / static_cast<size_t>(fmt.block_align));
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    uintptr_t released = reinterpret_cast<uintptr_t>(image);  // page-aligned: the mapping's start
    for (size_t begin = 0; begin < frames; begin += block_frames) {
        const size_t end = std::min(frames, begin + block_frames);
        for (size_t i = begin; i < end; ++i) {
            float sum = 0.0f;
            for (int c = 0; c < fmt.channels; ++c) sum += decode_sample(p + c * bytes_per_sample, fmt);
            out[i] = fmt.channels == 1 ? sum : sum / static_cast<float>(fmt.channels);
            p += fmt.block_align;
        }
        if (!release) continue;
        const uintptr_t done = reinterpret_cast<uintptr_t>(p) & ~(page - 1);
        if (done > released) {
            // Advice only: if the kernel declines, the pages stay resident and nothing is wrong.
            madvise(reinterpret_cast<void*>(released), done - released, MADV_DONTNEED);
            released = done;
        }
    }
}

// decode_wav's body; `release` as for decode_frames, only for images that are file mappings.
WavAudio decode_image(const uint8_t* data, size_t size, const std::string& name, double max_seconds,
                      bool release) {
    if (size >= 4 && (std::memcmp(data, "RF64", 4) == 0 || std::memcmp(data, "BW64", 4) == 0))
        fail(name, "RF64/BW64 WAV (the 64-bit variant for files over 4 GB) is not supported; "
                   "convert it to FLAC or split it");
    if (size < 12 || std::memcmp(data, "RIFF", 4) != 0 || std::memcmp(data + 8, "WAVE", 4) != 0)
        fail(name, "not a WAV file (no RIFF/WAVE header)");
    Format fmt;
    bool have_fmt = false;
    size_t pos = 12;
    while (pos + 8 <= size) {
        const uint8_t* chunk = data + pos;
        const uint32_t chunk_size = le32(chunk + 4);
        const size_t body = pos + 8;
        const size_t available = size - body;
        if (std::memcmp(chunk, "fmt ", 4) == 0) {
            if (chunk_size > available) fail(name, "truncated WAV 'fmt ' chunk");
            fmt = parse_fmt(data + body, chunk_size, name);
            have_fmt = true;
        } else if (std::memcmp(chunk, "data", 4) == 0) {
            if (!have_fmt) fail(name, "WAV 'data' chunk comes before the 'fmt ' chunk");
            // Writers that stream set the size to 0 or 0xFFFFFFFF: take what the file holds.
            // Any other size is a promise; a file holding less was cut short (a failed copy),
            // and transcribing the rest as if it were whole would hide that.
            const bool unknown_size = chunk_size == 0 || chunk_size == 0xFFFFFFFFu;
            if (!unknown_size && chunk_size > available) fail(name, truncation_message(fmt, chunk_size, available));
            const size_t n_bytes = unknown_size ? available : chunk_size;
            const size_t frames = n_bytes / static_cast<size_t>(fmt.block_align);
            if (max_seconds > 0 && static_cast<double>(frames) > max_seconds * fmt.sample_rate) {
                std::ostringstream m;
                m << "audio is " << static_cast<double>(frames) / fmt.sample_rate
                  << " s long; the limit is " << max_seconds << " s";
                fail(name, m.str());
            }
            WavAudio out;
            out.sample_rate = fmt.sample_rate;
            out.channels = fmt.channels;
            decode_frames(data, data + body, frames, fmt, release, out.samples);
            return out;
        }
        // Chunks are padded to an even size.
        const uint64_t next = static_cast<uint64_t>(body) + chunk_size + (chunk_size & 1u);
        if (next > size) break;
        pos = static_cast<size_t>(next);
    }
    fail(name, have_fmt ? "WAV file has no 'data' chunk" : "WAV file has no 'fmt ' chunk");
}

}  // namespace

WavAudio decode_wav(const uint8_t* data, size_t size, const std::string& name, double max_seconds) {
    return decode_image(data, size, name, max_seconds, false);
}

WavAudio read_wav_file(const std::string& path, double max_seconds) {
    // Mapped rather than read, so the length limit is checked before a huge file is touched,
    // and decoding can give the file's pages back as it goes (decode_frames).
    MappedFile file;
    try {
        file = MappedFile(path);
    } catch (const std::runtime_error& e) {
        throw InvalidAudio(e.what());
    }
    // Sequential: the kernel reads ahead further and may evict pages behind the reader.
    madvise(const_cast<uint8_t*>(file.data()), file.size(), MADV_SEQUENTIAL);
    return decode_image(file.data(), file.size(), path, max_seconds, true);
}

}  // namespace pk
