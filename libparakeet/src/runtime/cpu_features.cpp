#include "runtime/cpu_features.h"

#include <cstdlib>
#include <cstring>

#if defined(PARAKEET_HAVE_X86)
#include <cpuid.h>
#endif

namespace pk {
namespace {

bool forced_scalar() {
    const char* v = std::getenv("PARAKEET_CPU");
    return v != nullptr && std::strcmp(v, "scalar") == 0;
}

#if defined(PARAKEET_HAVE_X86)
// The OS must save the YMM state (XCR0 bits 1 and 2) or AVX instructions fault.
bool os_saves_ymm() {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
    const bool osxsave = (c >> 27) & 1u;
    if (!osxsave) return false;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    return (lo & 0x6u) == 0x6u;
}

CpuFeatures detect() {
    CpuFeatures f;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool avx = (c >> 28) & 1u;
    const bool fma = (c >> 12) & 1u;
    const bool f16c = (c >> 29) & 1u;
    if (!avx || !os_saves_ymm()) return f;
    f.fma = fma;
    f.f16c = f16c;
    if (__get_cpuid_count(7, 0, &a, &b, &c, &d)) f.avx2 = (b >> 5) & 1u;
    return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = forced_scalar() ? CpuFeatures{} : detect();
    return features;
}

}  // namespace pk
