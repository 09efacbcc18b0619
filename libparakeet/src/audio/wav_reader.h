// WAV file reading for the C ABI's *_path functions: RIFF/WAVE with integer PCM (8, 16, 24,
// 32 bit) or IEEE float (32, 64 bit) samples, plain or WAVE_FORMAT_EXTENSIBLE, any number of
// channels (mixed down to mono by averaging). Compressed formats (ADPCM, µ-law, MP3 in WAV…)
// are rejected with a message naming the format, RF64/BW64 (64-bit sizes) likewise. Malformed
// files (truncated chunks, absurd sizes) are rejected without reading past the end of the file.
//
// Memory: the samples are decoded straight into the one vector returned. A file is mapped,
// not read, and its pages are given back in blocks as decoding passes them, so an hour of
// 16 kHz 16-bit audio peaks at the 230 MB of floats, not the floats plus the 115 MB file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pk {

struct WavAudio {
    int sample_rate = 0;
    int channels = 0;          // in the file; `samples` is always mono
    std::vector<float> samples;  // mono, in [-1, 1] for integer PCM
};

// Reads and decodes the whole file. Throws pk::InvalidArgument with a message that names the
// file and the problem. `max_seconds` > 0 rejects longer audio before decoding it; 0 = no
// limit.
WavAudio read_wav_file(const std::string& path, double max_seconds);

// Same, for a WAV image in memory; `name` stands for the file name in messages.
WavAudio decode_wav(const uint8_t* data, size_t size, const std::string& name, double max_seconds);

}  // namespace pk
