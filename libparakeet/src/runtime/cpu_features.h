// CPU feature detection: which ISA levels this CPU can run.
//
// Kernels come in ISA levels, each in its own files (`*_avx2.cpp`, `*_avx512.cpp` on x86-64,
// `*_neon.cpp`, `*_dotprod.cpp`, `*_i8mm.cpp` on AArch64) beside the portable code, and are reached only through the kernel table of a level
// (kernels/kernel_table.h). A model chooses its level once, at load (at most `detected`), and
// every kernel it runs takes that level's table: kernels never read the level from here.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace pk {

// The levels of the two architectures form two chains above the one portable level:
// scalar < avx2 < avx512 on x86-64 and scalar < neon < dotprod < i8mm on AArch64. A level of
// one architecture is neither above nor below one of the other (see isa_includes), so never
// compare levels with < or >.
enum class IsaLevel {
    Scalar = 0,   // portable C++ only
    Avx2 = 1,     // AVX2 + FMA + F16C
    Avx512 = 2,   // AVX-512 F + BW + VL + VNNI on top of Avx2 (BF16 where present)
    Neon = 3,     // AArch64 Advanced SIMD (every AArch64 CPU has it; fp16 conversions included)
    Dotprod = 4,  // + SDOT/UDOT (Armv8.2 FEAT_DotProd)
    I8mm = 5,     // + SMMLA/USDOT (Armv8.6 FEAT_I8MM) on top of Dotprod
};

// "scalar", "avx2", "avx512", "neon", "dotprod" or "i8mm".
const char* isa_level_name(IsaLevel level);
// The level of that name; nullopt for any other string.
std::optional<IsaLevel> isa_level_from_name(const std::string& name);
// Whether code of level `lower` runs wherever level `l` runs: scalar is below every level, and
// within one architecture's chain the lower levels are below the higher ones.
bool isa_includes(IsaLevel l, IsaLevel lower);
// The levels of the architecture this library was built for, lowest first (scalar first).
const std::vector<IsaLevel>& isa_levels_of_build();

struct CpuFeatures {
    // What the CPU (and the OS, which must save the wider registers) supports.
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;
    bool avx512f = false;
    bool avx512bw = false;
    bool avx512vl = false;
    bool avx512vnni = false;
    bool avx512bf16 = false;
    bool neon = false;     // AArch64 HWCAP_ASIMD
    bool dotprod = false;  // HWCAP_ASIMDDP
    bool i8mm = false;     // HWCAP2_I8MM

    // The highest level the CPU supports.
    IsaLevel detected = IsaLevel::Scalar;

    // Whether this CPU can run the kernels of `l`.
    bool supports(IsaLevel l) const { return isa_includes(detected, l); }
};

// Features of the running CPU, detected once (thread-safe). A model may run a lower level
// (LoadOptions::isa), never a higher one.
const CpuFeatures& cpu_features();

}  // namespace pk
