// PackedWeights: the one-time repacking of a Linear weight into the panel layouts of
// matmul_layout.h. Runs at model load, so it is plain portable code.
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/bf16.h"
#include "kernels/f16.h"
#include "kernels/kernel_table.h"
#include "kernels/matmul.h"
#include "kernels/matmul_layout.h"
#include "quant/ggml_blocks.h"

namespace pk::kernels {

using namespace matmul_detail;

namespace {

constexpr size_t kQ8RawBlockBytes = 2 + kQ8Block;  // half d, then 32 int8

size_t panel_bytes(WeightType type, int64_t k) {
    if (is_unsigned_form(type)) return kPanel * weight_row_bytes(type, k);
    switch (type) {
        case WeightType::F32: return static_cast<size_t>(k) * kPanel * sizeof(float);
        case WeightType::F16: return static_cast<size_t>(k) * kPanel * sizeof(uint16_t);
        case WeightType::Q8_0: return static_cast<size_t>(k / kQ8Block) * kQ8PanelBlockBytes;
        case WeightType::BF16: return static_cast<size_t>((k + 1) / 2) * kBf16PairBytes;
        default: return 0;
    }
}

template <class T>
void pack_plain(const T* w, int64_t n, int64_t k, T* out) {
    const int64_t panels = (n + kPanel - 1) / kPanel;
    for (int64_t p = 0; p < panels; ++p) {
        T* dst = out + p * k * kPanel;
        for (int64_t j = 0; j < kPanel; ++j) {
            const int64_t row = p * kPanel + j;
            if (row >= n) continue;  // padding stays zero
            const T* src = w + row * k;
            for (int64_t kk = 0; kk < k; ++kk) dst[kk * kPanel + j] = src[kk];
        }
    }
}

// The BF16 pair layout; padding rows and the k past an odd K stay zero.
void pack_bf16_pairs(const uint16_t* w, int64_t n, int64_t k, uint16_t* out) {
    const int64_t panels = (n + kPanel - 1) / kPanel;
    const int64_t pairs = (k + 1) / 2;
    for (int64_t p = 0; p < panels; ++p) {
        uint16_t* dst = out + p * pairs * 2 * kPanel;
        for (int64_t j = 0; j < kPanel && p * kPanel + j < n; ++j) {
            const uint16_t* src = w + (p * kPanel + j) * k;
            for (int64_t kk = 0; kk < k; ++kk) dst[(kk / 2) * 2 * kPanel + 2 * j + kk % 2] = src[kk];
        }
    }
}

// Walks the Q8_0 panel blocks: writes the 16 scales of each (0 for padding rows) and calls
// put(q, j, dst) for each of its rows j, q = that row's 32 raw int8 (null for padding rows)
// and dst = the block's quant bytes, which put fills in its layout.
template <class PutQuants>
void pack_q8_0(const uint8_t* w, int64_t n, int64_t k, uint8_t* out, PutQuants&& put) {
    const int64_t panels = (n + kPanel - 1) / kPanel;
    const int64_t blocks = k / kQ8Block;
    const size_t row_bytes = static_cast<size_t>(blocks) * kQ8RawBlockBytes;
    for (int64_t p = 0; p < panels; ++p) {
        for (int64_t b = 0; b < blocks; ++b) {
            uint8_t* dst = out + (p * blocks + b) * kQ8PanelBlockBytes;
            float* scale = reinterpret_cast<float*>(dst);
            for (int64_t j = 0; j < kPanel; ++j) {
                const int64_t row = p * kPanel + j;
                const uint8_t* src = row < n ? w + row * row_bytes + b * kQ8RawBlockBytes : nullptr;
                if (src) {
                    uint16_t d;
                    std::memcpy(&d, src, sizeof d);
                    scale[j] = f16_to_f32(d);
                }
                put(src ? reinterpret_cast<const int8_t*>(src + 2) : nullptr, j,
                    dst + kPanel * sizeof(float));
            }
        }
    }
}

// The pair layout (scalar and avx2 levels); padding rows stay zero.
void put_pairs(const int8_t* src, int64_t j, uint8_t* dst) {
    if (!src) return;
    int8_t* q = reinterpret_cast<int8_t*>(dst);
    const int64_t g = j / 8, i = j % 8;
    for (int64_t t = 0; t < kQ8PairsPerBlock; ++t) {
        for (int64_t h = 0; h < 2; ++h) q[t * 2 * kPanel + 16 * g + 2 * i + h] = src[2 * t + h];
    }
}

// The quad layout (avx512 level): q + 128 as uint8; padding rows are q = 0 (u = 128), which
// the activation correction cancels like any other.
void put_quads(const int8_t* src, int64_t j, uint8_t* dst) {
    for (int64_t i = 0; i < kQ8Block; ++i) {
        const int q = src ? src[i] : 0;
        dst[(i / 4) * 4 * kPanel + 4 * j + i % 4] = static_cast<uint8_t>(q + kQ8QuadBias);
    }
}

// The pair order (i8mm level): signed q, outputs 2 p and 2 p + 1 side by side in groups of 8 k;
// padding rows are q = 0.
void put_mmla(const int8_t* src, int64_t j, uint8_t* dst) {
    if (!src) return;
    for (int64_t i = 0; i < kQ8Block; ++i) {
        dst[(i / 8) * 8 * kPanel + 16 * (j / 2) + 8 * (j % 2) + i % 8] = static_cast<uint8_t>(src[i]);
    }
}

// The unsigned-form layout: each block column's 16 row blocks together; padding rows stay zero.
void pack_blocks(WeightType type, const uint8_t* w, int64_t n, int64_t k, uint8_t* out) {
    const size_t row_bytes = weight_row_bytes(type, k);
    const size_t block_bytes = quant::block_bytes(static_cast<GgmlType>(type));
    const int64_t columns = k / weight_block_values(type);
    for (int64_t row = 0; row < n; ++row) {
        const int64_t p = row / kPanel, j = row % kPanel;
        uint8_t* panel = out + static_cast<size_t>(p) * kPanel * row_bytes;
        for (int64_t c = 0; c < columns; ++c) {
            std::memcpy(panel + (c * kPanel + j) * block_bytes, w + row * row_bytes + c * block_bytes, block_bytes);
        }
    }
}

}  // namespace

bool is_unsigned_form(WeightType type) {
    switch (type) {
        case WeightType::Q4_0:
        case WeightType::Q4_1:
        case WeightType::Q5_0:
        case WeightType::Q5_1:
        case WeightType::Q4_K:
        case WeightType::Q5_K:
        case WeightType::Q6_K:
            return true;
        default:
            return false;
    }
}

int64_t weight_block_values(WeightType type) {
    if (type == WeightType::Q8_0) return kQ8Block;
    return is_unsigned_form(type) ? quant::block_values(static_cast<GgmlType>(type)) : 1;
}

size_t weight_row_bytes(WeightType type, int64_t k) {
    if (is_unsigned_form(type)) return quant::row_bytes(static_cast<GgmlType>(type), k);
    switch (type) {
        case WeightType::F32: return static_cast<size_t>(k) * sizeof(float);
        case WeightType::F16: return static_cast<size_t>(k) * sizeof(uint16_t);
        case WeightType::Q8_0: return static_cast<size_t>(k / kQ8Block) * kQ8RawBlockBytes;
        case WeightType::BF16: return static_cast<size_t>(k) * sizeof(uint16_t);
        default: return 0;
    }
}

PackedWeights::PackedWeights(WeightType type, const void* data, int64_t n, int64_t k,
                             IsaLevel level)
    : type_(type), n_(n), k_(k), level_(level), kernels_(nullptr), bytes_(0), data_(nullptr, std::free) {
    if (!cpu_features().supports(level)) {
        throw std::invalid_argument("PackedWeights: level above the CPU's");
    }
    kernels_ = &kernel_table(level).matmul;
    if (n < 1 || k < 1) throw std::invalid_argument("PackedWeights: N and K must be >= 1");
    if (k % weight_block_values(type) != 0) {
        throw std::invalid_argument("PackedWeights: K must be a multiple of the type's block of " +
                                    std::to_string(weight_block_values(type)));
    }
    if (type == WeightType::BF16 && !bf16_available(level)) {
        throw std::invalid_argument("PackedWeights: BF16 weights need AVX512_BF16 at the avx512 level");
    }
    if (data == nullptr) throw std::invalid_argument("PackedWeights: null data");
    bytes_ = static_cast<size_t>(n_panels()) * panel_bytes(type, k);
    // 64-byte alignment: every panel row of F32 weights is one cache line.
    const size_t alloc = (bytes_ + 63) / 64 * 64;
    void* mem = std::aligned_alloc(64, alloc);
    if (mem == nullptr) throw std::bad_alloc();
    data_.reset(static_cast<uint8_t*>(mem));
    std::memset(mem, 0, alloc);
    switch (type) {
        case WeightType::F32:
            pack_plain(static_cast<const float*>(data), n, k, reinterpret_cast<float*>(mem));
            break;
        case WeightType::F16:
            pack_plain(static_cast<const uint16_t*>(data), n, k, reinterpret_cast<uint16_t*>(mem));
            break;
        case WeightType::Q8_0:
            pack_q8_0(static_cast<const uint8_t*>(data), n, k, static_cast<uint8_t*>(mem),
                      q8_uses_mmla(level) ? put_mmla : q8_uses_quads(level) ? put_quads : put_pairs);
            break;
        case WeightType::BF16:
            pack_bf16_pairs(static_cast<const uint16_t*>(data), n, k, reinterpret_cast<uint16_t*>(mem));
            break;
        default:
            pack_blocks(type, static_cast<const uint8_t*>(data), n, k, static_cast<uint8_t*>(mem));
            break;
    }
}

bool PackedWeights::bf16_available(IsaLevel level) {
    return isa_includes(level, IsaLevel::Avx512) && cpu_features().supports(level) && cpu_features().avx512bf16;
}

PackedWeights PackedWeights::to_bf16(WeightType source, const void* data, int64_t n, int64_t k,
                                     IsaLevel level) {
    if (source != WeightType::F32 && source != WeightType::F16) {
        throw std::invalid_argument("PackedWeights::to_bf16: the source must be F32 or F16");
    }
    if (!bf16_available(level)) {
        throw std::invalid_argument("PackedWeights: BF16 weights need AVX512_BF16 at the avx512 level");
    }
    if (n < 1 || k < 1) throw std::invalid_argument("PackedWeights: N and K must be >= 1");
    if (data == nullptr) throw std::invalid_argument("PackedWeights: null data");
    std::vector<uint16_t> rounded(static_cast<size_t>(n * k));
    for (size_t i = 0; i < rounded.size(); ++i) {
        const float v = source == WeightType::F32 ? static_cast<const float*>(data)[i]
                                                  : f16_to_f32(static_cast<const uint16_t*>(data)[i]);
        rounded[i] = f32_to_bf16(v);
    }
    return PackedWeights(WeightType::BF16, rounded.data(), n, k, level);
}

int64_t PackedWeights::n_panels() const { return (n_ + kPanel - 1) / kPanel; }

const uint8_t* PackedWeights::panel(int64_t p) const {
    return data_.get() + static_cast<size_t>(p) * panel_bytes(type_, k_);
}

}  // namespace pk::kernels
