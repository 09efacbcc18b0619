#include "runtime/cpu_features.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "common/errors.h"

#if defined(PARAKEET_HAVE_X86)
#include <cpuid.h>
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
#else
void detect(CpuFeatures&) {}
#endif

IsaLevel highest_level(const CpuFeatures& f) {
    if (!(f.avx2 && f.fma && f.f16c)) return IsaLevel::Scalar;
    if (!(f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni)) return IsaLevel::Avx2;
    return IsaLevel::Avx512;
}

CpuFeatures make_features() {
    CpuFeatures f;
    detect(f);
    f.detected = highest_level(f);
    f.level = f.detected;
    const char* v = std::getenv("PARAKEET_CPU");
    if (v == nullptr || *v == '\0') return f;
    for (IsaLevel l : {IsaLevel::Scalar, IsaLevel::Avx2, IsaLevel::Avx512}) {
        if (std::strcmp(v, isa_level_name(l)) != 0) continue;
        if (l > f.detected) {
            f.request_error = "PARAKEET_CPU asks for an instruction set this CPU does not have";
        } else {
            f.level = l;
        }
        return f;
    }
    f.request_error = "PARAKEET_CPU must be scalar, avx2 or avx512";
    return f;
}

}  // namespace

const char* isa_level_name(IsaLevel level) {
    switch (level) {
        case IsaLevel::Scalar: return "scalar";
        case IsaLevel::Avx2: return "avx2";
        case IsaLevel::Avx512: return "avx512";
    }
    return "unknown";
}

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = make_features();
    return features;
}

void check_requested_isa() {
    const CpuFeatures& f = cpu_features();
    if (f.request_error == nullptr) return;
    const char* v = std::getenv("PARAKEET_CPU");
    throw InvalidInput(std::string(f.request_error) + " (PARAKEET_CPU=" + (v ? v : "") +
                       ", this CPU supports up to " + isa_level_name(f.detected) + ")");
}

}  // namespace pk
