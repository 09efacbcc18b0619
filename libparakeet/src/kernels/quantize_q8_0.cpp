#include "kernels/quantize_q8_0.h"

#include <cmath>
#include <cstring>
#include <stdexcept>

#include "kernels/f16.h"

namespace pk::kernels {

void quantize_q8_0(const float* x, int64_t n, uint8_t* out) {
    constexpr int64_t kBlock = kQ8_0BlockValues;
    if (n % kBlock != 0) throw std::invalid_argument("quantize_q8_0: n must be a multiple of 32");
    for (int64_t b = 0; b < n / kBlock; ++b, x += kBlock, out += 2 + kBlock) {
        float amax = 0.0f;
        for (int64_t i = 0; i < kBlock; ++i) amax = std::fmax(amax, std::fabs(x[i]));
        const float d = amax / 127.0f;
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        const uint16_t h = f32_to_f16(d);
        std::memcpy(out, &h, sizeof h);  // host order, as the GGUF reader and PackedWeights read it
        for (int64_t i = 0; i < kBlock; ++i)
            out[2 + i] = static_cast<uint8_t>(static_cast<int8_t>(std::roundf(x[i] * id)));
    }
}

}  // namespace pk::kernels
