// Builds the kernel tables of the build's architecture, each from the one below (see kernel_table.h).
#include "kernels/kernel_table.h"

#include <stdexcept>
#include <string>

namespace pk::kernels {
namespace {

using Fill = void (*)(KernelTable&);

// Every fill function of a level, in no particular order: each sets only its own slots.
constexpr Fill kScalar[] = {
    add_matmul_kernels_scalar,   add_ops_softmax_scalar,       add_ops_layer_norm_scalar,
    add_ops_activation_scalar,   add_conv_depthwise1d_scalar,  add_conv_pointwise_scalar,
    add_conv_subsampling_scalar, add_attention_rel_pos_scalar, add_attention_local_rel_pos_scalar,
    add_fft_scalar,              add_matmul_kquant_scalar,     add_ops_dot_scalar,
    add_conv_winograd_f4_scalar, add_transpose_scalar,          add_ops_rows_scalar,
};
#if defined(PARAKEET_HAVE_X86)
constexpr Fill kAvx2[] = {
    add_matmul_kernels_avx2,   add_ops_softmax_avx2,       add_ops_layer_norm_avx2,
    add_ops_activation_avx2,   add_conv_depthwise1d_avx2,  add_conv_pointwise_avx2,
    add_conv_subsampling_avx2, add_attention_rel_pos_avx2, add_attention_local_rel_pos_avx2,
    add_matmul_kquant_avx2,    add_ops_dot_avx2,           add_conv_winograd_f4_avx2,
    add_ops_rows_avx2,
};
constexpr Fill kAvx512[] = {
    add_matmul_kernels_avx512, add_matmul_kernels_bf16_avx512, add_ops_softmax_avx512,
    add_ops_activation_avx512, add_attention_rel_pos_avx512,   add_matmul_kquant_avx512,
    add_attention_local_rel_pos_avx512, add_conv_pointwise_avx512, add_conv_winograd_f4_avx512,
    add_attention_dot_product_avx512, add_fft_avx512, add_transpose_avx512,
    add_ops_rows_avx512,
};
#endif
#if defined(PARAKEET_HAVE_AARCH64)
constexpr Fill kNeon[] = {
    add_matmul_kernels_neon,    add_ops_softmax_neon, add_ops_layer_norm_neon,
    add_ops_activation_neon,    add_ops_dot_neon,
};
constexpr Fill kDotprod[] = {add_matmul_kernels_dotprod, add_matmul_kquant_dotprod};
constexpr Fill kI8mm[] = {add_matmul_kernels_i8mm, add_matmul_kquant_i8mm};
#endif

template <size_t N>
KernelTable derive(const KernelTable& below, IsaLevel level, const Fill (&fills)[N]) {
    KernelTable t = below;
    t.level = level;
    for (Fill f : fills) f(t);
    return t;
}

const KernelTable& scalar_table() {
    static const KernelTable t = derive(KernelTable{}, IsaLevel::Scalar, kScalar);
    return t;
}

#if defined(PARAKEET_HAVE_X86)
const KernelTable& avx2_table() {
    static const KernelTable t = derive(scalar_table(), IsaLevel::Avx2, kAvx2);
    return t;
}

const KernelTable& avx512_table() {
    static const KernelTable t = derive(avx2_table(), IsaLevel::Avx512, kAvx512);
    return t;
}
#endif
#if defined(PARAKEET_HAVE_AARCH64)
const KernelTable& neon_table() {
    static const KernelTable t = derive(scalar_table(), IsaLevel::Neon, kNeon);
    return t;
}

const KernelTable& dotprod_table() {
    static const KernelTable t = derive(neon_table(), IsaLevel::Dotprod, kDotprod);
    return t;
}

const KernelTable& i8mm_table() {
    static const KernelTable t = derive(dotprod_table(), IsaLevel::I8mm, kI8mm);
    return t;
}
#endif

}  // namespace

const KernelTable& kernel_table(IsaLevel level) {
    if (!cpu_features().supports(level)) {
        throw std::invalid_argument(std::string("kernel_table: this CPU has no ") +
                                    isa_level_name(level) + " level");
    }
    switch (level) {
#if defined(PARAKEET_HAVE_X86)
        case IsaLevel::Avx512: return avx512_table();
        case IsaLevel::Avx2: return avx2_table();
#endif
#if defined(PARAKEET_HAVE_AARCH64)
        case IsaLevel::I8mm: return i8mm_table();
        case IsaLevel::Dotprod: return dotprod_table();
        case IsaLevel::Neon: return neon_table();
#endif
        default: return scalar_table();
    }
}

}  // namespace pk::kernels
