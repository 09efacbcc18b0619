#include "runtime/cpu_features.h"

#if defined(PARAKEET_HAVE_X86)
#include <cpuid.h>
#elif defined(PARAKEET_HAVE_AARCH64)
#include <asm/hwcap.h>
#include <sys/auxv.h>
#endif

namespace pk {
namespace {

#if defined(PARAKEET_HAVE_X86)
unsigned long long read_xcr0() {
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (static_cast<unsigned long long>(hi) << 32) | lo;
}

void detect(CpuFeatures& f) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    const bool avx = (c >> 28) & 1u;
    const bool osxsave = (c >> 27) & 1u;
    if (!avx || !osxsave) return;
    const unsigned long long xcr0 = read_xcr0();
    // The OS must save the YMM state (XCR0 bits 1, 2) or AVX instructions fault; AVX-512 also
    // needs the opmask and ZMM state (bits 5, 6, 7).
    if ((xcr0 & 0x6u) != 0x6u) return;
    const bool os_saves_zmm = (xcr0 & 0xe6u) == 0xe6u;
    f.fma = (c >> 12) & 1u;
    f.f16c = (c >> 29) & 1u;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    f.avx2 = (b >> 5) & 1u;
    if (os_saves_zmm) {
        f.avx512f = (b >> 16) & 1u;
        f.avx512bw = (b >> 30) & 1u;
        f.avx512vl = (b >> 31) & 1u;
        f.avx512vnni = (c >> 11) & 1u;
        unsigned a1, b1, c1, d1;
        if (__get_cpuid_count(7, 1, &a1, &b1, &c1, &d1)) f.avx512bf16 = (a1 >> 5) & 1u;
    }
}

IsaLevel highest_level(const CpuFeatures& f) {
    if (!(f.avx2 && f.fma && f.f16c)) return IsaLevel::Scalar;
    if (!(f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni)) return IsaLevel::Avx2;
    return IsaLevel::Avx512;
}
#elif defined(PARAKEET_HAVE_AARCH64)
// The kernel says what the CPU has and the OS enables (the ID registers are the kernel's to
// read): AT_HWCAP bits for Advanced SIMD and the dot products, AT_HWCAP2 for I8MM.
void detect(CpuFeatures& f) {
    const unsigned long hwcap = getauxval(AT_HWCAP);
    const unsigned long hwcap2 = getauxval(AT_HWCAP2);
    f.neon = (hwcap & HWCAP_ASIMD) != 0;
    f.dotprod = (hwcap & HWCAP_ASIMDDP) != 0;
    f.i8mm = (hwcap2 & HWCAP2_I8MM) != 0;
}

// Each level needs the ones below it: a CPU with I8MM but no dot product (none is known) runs neon.
IsaLevel highest_level(const CpuFeatures& f) {
    if (!f.neon) return IsaLevel::Scalar;
    if (!f.dotprod) return IsaLevel::Neon;
    if (!f.i8mm) return IsaLevel::Dotprod;
    return IsaLevel::I8mm;
}
#else
void detect(CpuFeatures&) {}
IsaLevel highest_level(const CpuFeatures&) { return IsaLevel::Scalar; }
#endif

// Which chain a level is on: 0 for scalar (on both), 1 for x86-64, 2 for AArch64.
int isa_chain(IsaLevel l) {
    switch (l) {
        case IsaLevel::Scalar: return 0;
        case IsaLevel::Avx2:
        case IsaLevel::Avx512: return 1;
        case IsaLevel::Neon:
        case IsaLevel::Dotprod:
        case IsaLevel::I8mm: return 2;
    }
    return -1;
}

constexpr IsaLevel kAllLevels[] = {IsaLevel::Scalar, IsaLevel::Avx2,    IsaLevel::Avx512,
                                   IsaLevel::Neon,   IsaLevel::Dotprod, IsaLevel::I8mm};

CpuFeatures make_features() {
    CpuFeatures f;
    detect(f);
    f.detected = highest_level(f);
    return f;
}

}  // namespace

const char* isa_level_name(IsaLevel level) {
    switch (level) {
        case IsaLevel::Scalar: return "scalar";
        case IsaLevel::Avx2: return "avx2";
        case IsaLevel::Avx512: return "avx512";
        case IsaLevel::Neon: return "neon";
        case IsaLevel::Dotprod: return "dotprod";
        case IsaLevel::I8mm: return "i8mm";
    }
    return "unknown";
}

std::optional<IsaLevel> isa_level_from_name(const std::string& name) {
    for (IsaLevel l : kAllLevels) {
        if (name == isa_level_name(l)) return l;
    }
    return std::nullopt;
}

bool isa_includes(IsaLevel l, IsaLevel lower) {
    if (lower == IsaLevel::Scalar) return true;
    return isa_chain(l) == isa_chain(lower) && static_cast<int>(lower) <= static_cast<int>(l);
}

const std::vector<IsaLevel>& isa_levels_of_build() {
#if defined(PARAKEET_HAVE_X86)
    static const std::vector<IsaLevel> levels{IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512};
#elif defined(PARAKEET_HAVE_AARCH64)
    static const std::vector<IsaLevel> levels{IsaLevel::Scalar, IsaLevel::Neon, IsaLevel::Dotprod,
                                              IsaLevel::I8mm};
#else
    static const std::vector<IsaLevel> levels{IsaLevel::Scalar};
#endif
    return levels;
}

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = make_features();
    return features;
}

}  // namespace pk
