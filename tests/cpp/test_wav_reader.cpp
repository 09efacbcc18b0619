// WAV decoding: every PCM/float layout decodes to the right mono samples; compressed,
// malformed and over-long files are rejected with a clear message and no over-read.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "audio/wav_reader.h"
#include "common/errors.h"

namespace {

void put16(std::vector<uint8_t>& b, uint16_t v) {
    b.push_back(v & 0xFF);
    b.push_back(v >> 8);
}
void put32(std::vector<uint8_t>& b, uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back((v >> (8 * i)) & 0xFF);
}
void put_tag(std::vector<uint8_t>& b, const char* tag) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<uint8_t>(tag[i]));
}

struct WavSpec {
    uint16_t tag = 1;
    uint16_t channels = 1;
    uint32_t rate = 16000;
    uint16_t bits = 16;
    bool extensible = false;
    std::vector<uint8_t> extra_chunk;  // inserted between fmt and data
};

std::vector<uint8_t> make_wav(const WavSpec& s, const std::vector<uint8_t>& payload) {
    std::vector<uint8_t> b;
    put_tag(b, "RIFF");
    put32(b, 0);  // patched below
    put_tag(b, "WAVE");
    put_tag(b, "fmt ");
    put32(b, s.extensible ? 40 : 16);
    put16(b, s.extensible ? 0xFFFE : s.tag);
    put16(b, s.channels);
    put32(b, s.rate);
    put32(b, s.rate * s.channels * (s.bits / 8));
    put16(b, static_cast<uint16_t>(s.channels * (s.bits / 8)));
    put16(b, s.bits);
    if (s.extensible) {
        put16(b, 22);
        put16(b, s.bits);
        put32(b, 0);
        put16(b, s.tag);  // sub-format GUID starts with the format tag
        for (int i = 0; i < 14; ++i) b.push_back(0);
    }
    b.insert(b.end(), s.extra_chunk.begin(), s.extra_chunk.end());
    put_tag(b, "data");
    put32(b, static_cast<uint32_t>(payload.size()));
    b.insert(b.end(), payload.begin(), payload.end());
    const uint32_t riff = static_cast<uint32_t>(b.size() - 8);
    std::memcpy(&b[4], &riff, 4);
    return b;
}

pk::WavAudio decode(const std::vector<uint8_t>& b, double max_seconds = 0) {
    return pk::decode_wav(b.data(), b.size(), "test.wav", max_seconds);
}

std::string error_of(const std::vector<uint8_t>& b, double max_seconds = 0) {
    try {
        decode(b, max_seconds);
    } catch (const pk::InvalidAudio& e) {
        return e.what();
    }
    return "(no error)";
}

TEST(WavReader, Pcm16Mono) {
    std::vector<uint8_t> p;
    for (int16_t v : {0, 16384, -32768, 32767}) put16(p, static_cast<uint16_t>(v));
    const auto a = decode(make_wav({}, p));
    EXPECT_EQ(a.sample_rate, 16000);
    EXPECT_EQ(a.channels, 1);
    ASSERT_EQ(a.samples.size(), 4u);
    EXPECT_EQ(a.samples[0], 0.0f);
    EXPECT_EQ(a.samples[1], 0.5f);
    EXPECT_EQ(a.samples[2], -1.0f);
    EXPECT_FLOAT_EQ(a.samples[3], 32767.0f / 32768.0f);
}

TEST(WavReader, StereoIsAveragedToMono) {
    WavSpec s;
    s.channels = 2;
    s.rate = 44100;
    std::vector<uint8_t> p;
    put16(p, 16384);
    put16(p, 0);  // frame 0: 0.5, 0
    put16(p, static_cast<uint16_t>(-16384));
    put16(p, static_cast<uint16_t>(-16384));  // frame 1: -0.5, -0.5
    const auto a = decode(make_wav(s, p));
    EXPECT_EQ(a.sample_rate, 44100);
    EXPECT_EQ(a.channels, 2);
    ASSERT_EQ(a.samples.size(), 2u);
    EXPECT_EQ(a.samples[0], 0.25f);
    EXPECT_EQ(a.samples[1], -0.5f);
}

TEST(WavReader, Pcm8And24And32AndFloat) {
    {
        WavSpec s;
        s.bits = 8;
        const auto a = decode(make_wav(s, {128, 192, 0}));
        ASSERT_EQ(a.samples.size(), 3u);
        EXPECT_EQ(a.samples[0], 0.0f);
        EXPECT_EQ(a.samples[1], 0.5f);
        EXPECT_EQ(a.samples[2], -1.0f);
    }
    {
        WavSpec s;
        s.bits = 24;
        const auto a = decode(make_wav(s, {0x00, 0x00, 0x40, 0x00, 0x00, 0xC0}));
        ASSERT_EQ(a.samples.size(), 2u);
        EXPECT_EQ(a.samples[0], 0.5f);
        EXPECT_EQ(a.samples[1], -0.5f);
    }
    {
        WavSpec s;
        s.bits = 32;
        std::vector<uint8_t> p;
        put32(p, 0x40000000u);
        const auto a = decode(make_wav(s, p));
        EXPECT_EQ(a.samples.at(0), 0.5f);
    }
    {
        WavSpec s;
        s.tag = 3;
        s.bits = 32;
        s.extensible = true;
        std::vector<uint8_t> p(4);
        const float v = -0.25f;
        std::memcpy(p.data(), &v, 4);
        const auto a = decode(make_wav(s, p));
        EXPECT_EQ(a.samples.at(0), -0.25f);
    }
}

TEST(WavReader, SkipsOtherChunksIncludingOddSizedOnes) {
    WavSpec s;
    put_tag(s.extra_chunk, "LIST");
    put32(s.extra_chunk, 3);
    s.extra_chunk.insert(s.extra_chunk.end(), {'a', 'b', 'c', 0});  // odd size + pad byte
    std::vector<uint8_t> p;
    put16(p, 16384);
    const auto a = decode(make_wav(s, p));
    ASSERT_EQ(a.samples.size(), 1u);
    EXPECT_EQ(a.samples[0], 0.5f);
}

TEST(WavReader, RejectsCompressedFormatsByName) {
    WavSpec s;
    s.tag = 7;  // mu-law
    s.bits = 8;
    EXPECT_NE(error_of(make_wav(s, {1, 2})).find("not PCM"), std::string::npos);
    EXPECT_NE(error_of(make_wav(s, {1, 2})).find("mu-law"), std::string::npos);
}

TEST(WavReader, RejectsMalformedFiles) {
    std::vector<uint8_t> p(4, 0);
    const auto good = make_wav({}, p);
    EXPECT_NE(error_of({'R', 'I', 'F', 'F'}).find("not a WAV"), std::string::npos);
    auto no_wave = good;
    no_wave[8] = 'X';
    EXPECT_NE(error_of(no_wave).find("not a WAV"), std::string::npos);
    // Truncated inside the fmt chunk.
    EXPECT_NE(error_of(std::vector<uint8_t>(good.begin(), good.begin() + 24)).find("truncated"),
              std::string::npos);
    // Header only: no data chunk.
    EXPECT_NE(error_of(std::vector<uint8_t>(good.begin(), good.begin() + 36)).find("no 'data'"),
              std::string::npos);
    WavSpec s;
    s.channels = 0;
    EXPECT_NE(error_of(make_wav(s, p)).find("no channels"), std::string::npos);
    s = {};
    s.bits = 12;
    EXPECT_NE(error_of(make_wav(s, p)).find("12 bits"), std::string::npos);
}

TEST(WavReader, TruncatedDataIsAnErrorNamingWhatWasPromised) {
    // A header that promises 10 s with 16 bytes after it (a failed copy): before, this read as
    // 0.001 s of audio, with no word of the rest.
    std::vector<uint8_t> p;
    for (int i = 0; i < 8; ++i) put16(p, 100);
    auto b = make_wav({}, p);
    const uint32_t promised = 320000;
    std::memcpy(&b[40], &promised, 4);
    EXPECT_EQ(error_of(b), "test.wav: truncated WAV: the header promises 10.000 s of audio (320000 bytes), the file "
                           "holds 0.001 s (16 bytes)");
    // Cut inside the last frame: still short of what the header promised.
    std::vector<uint8_t> q;
    for (int i = 0; i < 10; ++i) put16(q, 100);
    auto c = make_wav({}, q);
    c.resize(c.size() - 5);
    EXPECT_NE(error_of(c).find("truncated WAV"), std::string::npos);
}

TEST(WavReader, RejectsAudioOverTheLengthLimit) {
    std::vector<uint8_t> p(2 * 16000 * 3, 0);  // 3 s
    EXPECT_EQ(decode(make_wav({}, p), 3.0).samples.size(), 48000u);
    EXPECT_NE(error_of(make_wav({}, p), 2.0).find("limit is 2 s"), std::string::npos);
}

TEST(WavReader, MissingFileIsAnInputError) {
    EXPECT_THROW(pk::read_wav_file("/nonexistent/dir/clip.wav", 0), pk::InvalidAudio);
}

TEST(WavReader, RejectsRf64ByName) {
    auto b = make_wav({}, std::vector<uint8_t>(4, 0));
    std::memcpy(b.data(), "RF64", 4);
    EXPECT_NE(error_of(b).find("RF64"), std::string::npos);
    std::memcpy(b.data(), "BW64", 4);
    EXPECT_NE(error_of(b).find("RF64/BW64"), std::string::npos);
}

TEST(WavReader, RejectsSampleRatesPastIntRangeNamingThem) {
    WavSpec s;
    s.rate = 0x80000000u;  // would turn negative as an int
    EXPECT_NE(error_of(make_wav(s, {0, 0})).find("sample rate of 2147483648 Hz"), std::string::npos);
    s.rate = 0;
    EXPECT_NE(error_of(make_wav(s, {0, 0})).find("sample rate of 0 Hz"), std::string::npos);
}

TEST(WavReader, ChunkSizesNearFourGigabytesDoNotReadPastTheEnd) {
    // A chunk before the data that claims ~4 GB: the walk stops at the end of the file.
    WavSpec s;
    put_tag(s.extra_chunk, "LIST");
    put32(s.extra_chunk, 0xFFFFFFF1u);  // odd too: the pad byte must not wrap the position
    s.extra_chunk.insert(s.extra_chunk.end(), {1, 2, 3, 4});
    EXPECT_NE(error_of(make_wav(s, {0, 0})).find("no 'data'"), std::string::npos);
    // A data chunk that claims more than the file holds (but is no streaming marker) is a
    // truncated file; the streaming markers 0 and 0xFFFFFFFF read what is there.
    std::vector<uint8_t> p;
    for (int i = 0; i < 3; ++i) put16(p, 16384);
    auto b = make_wav({}, p);
    for (const uint32_t size : {0xFFFFFFFEu, 0xFFFFFFFFu, 0u}) {
        std::memcpy(&b[40], &size, 4);
        if (size == 0xFFFFFFFEu)
            EXPECT_NE(error_of(b).find("truncated WAV"), std::string::npos);
        else
            EXPECT_EQ(decode(b).samples, std::vector<float>(3, 0.5f)) << size;
    }
}

TEST(WavReader, ChannelCountsAtTheBlockAlignLimit) {
    // 65535 channels of 8 bits: block align 65535, the most a 16-bit field holds.
    WavSpec s;
    s.channels = 65535;
    s.bits = 8;
    std::vector<uint8_t> frame(65535, 128);
    frame[0] = 255;  // one channel at 127/128, the rest silent
    const auto a = decode(make_wav(s, frame));
    ASSERT_EQ(a.samples.size(), 1u);
    EXPECT_EQ(a.channels, 65535);
    EXPECT_FLOAT_EQ(a.samples[0], (127.0f / 128.0f) / 65535.0f);
    // 32768 channels of 16 bits would need a block align of 65536, which does not fit.
    s.channels = 32768;
    s.bits = 16;
    EXPECT_NE(error_of(make_wav(s, std::vector<uint8_t>(8, 0))).find("block alignment"), std::string::npos);
}

// The file path decodes a mapping and gives its pages back block by block as it goes; the
// samples must be exactly those of decoding the same bytes in memory, across many blocks.
TEST(WavReader, FileDecodingMatchesMemoryAcrossReleasedBlocks) {
    WavSpec s;
    s.channels = 3;
    s.bits = 24;
    const size_t frames = 1'500'007;  // ~13 MB of data: several 4 MB blocks and a ragged end
    std::vector<uint8_t> p;
    p.reserve(frames * 9);
    uint32_t x = 12345;
    for (size_t i = 0; i < frames * 3; ++i) {
        x = x * 1664525u + 1013904223u;
        for (int k = 0; k < 3; ++k) p.push_back(static_cast<uint8_t>(x >> (8 + 8 * k)));
    }
    const auto b = make_wav(s, p);
    const std::string path = testing::TempDir() + "/wav_reader_blocks.wav";
    {
        std::FILE* f = std::fopen(path.c_str(), "wb");
        ASSERT_NE(f, nullptr);
        ASSERT_EQ(std::fwrite(b.data(), 1, b.size(), f), b.size());
        std::fclose(f);
    }
    const auto from_file = pk::read_wav_file(path, 0);
    const auto from_memory = decode(b);
    std::remove(path.c_str());
    ASSERT_EQ(from_file.samples.size(), frames);
    EXPECT_EQ(from_file.channels, 3);
    EXPECT_TRUE(from_file.samples == from_memory.samples);
}

TEST(WavReader, FileOverTheLengthLimitIsRejected) {
    const auto b = make_wav({}, std::vector<uint8_t>(2 * 16000 * 2, 0));  // 2 s
    const std::string path = testing::TempDir() + "/wav_reader_limit.wav";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    ASSERT_NE(f, nullptr);
    std::fwrite(b.data(), 1, b.size(), f);
    std::fclose(f);
    EXPECT_THROW(pk::read_wav_file(path, 1.5), pk::InvalidAudio);
    EXPECT_EQ(pk::read_wav_file(path, 2.0).samples.size(), 32000u);
    std::remove(path.c_str());
}

}  // namespace
