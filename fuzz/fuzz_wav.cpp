// libFuzzer target for the WAV reader (the C ABI's *_path entry points parse untrusted files
// with it): any input must either decode — to exactly the frames the file holds, every sample
// readable — or be rejected with pk::InvalidArgument. Any other exception, crash or out-of-bounds
// read (AddressSanitizer) is a finding.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "audio/wav_reader.h"
#include "common/errors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    // The first byte picks the length limit, so the limit check is fuzzed too: 0 = none.
    const double max_seconds = size > 0 ? (data[0] & 0x0F) * 0.25 : 0.0;
    try {
        const pk::WavAudio a = pk::decode_wav(data, size, "fuzz.wav", max_seconds);
        if (a.sample_rate < 1 || a.channels < 1) __builtin_trap();
        // Mono output: never more samples than the input has bytes per frame allows.
        if (a.samples.size() > size / static_cast<size_t>(a.channels)) __builtin_trap();
        if (max_seconds > 0 && static_cast<double>(a.samples.size()) > max_seconds * a.sample_rate)
            __builtin_trap();
        uint32_t sink = 0;
        for (float v : a.samples) {
            uint32_t bits;
            std::memcpy(&bits, &v, 4);
            sink ^= bits;
        }
        volatile uint32_t keep = sink;
        (void)keep;
    } catch (const pk::InvalidArgument&) {
        // a clean rejection
    }
    return 0;
}
