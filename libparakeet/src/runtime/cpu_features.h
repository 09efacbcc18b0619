// CPU feature detection: which ISA levels this CPU can run.
//
// Kernels come in ISA levels, each in its own files (`*_avx2.cpp`, `*_avx512.cpp`) beside the
// portable code, and are reached only through the kernel table of a level
// (kernels/kernel_table.h). A model chooses its level once, at load (at most `detected`), and
// every kernel it runs takes that level's table: kernels never read the level from here.
#pragma once

#include <optional>
#include <string>

namespace pk {

enum class IsaLevel {
    Scalar = 0,  // portable C++ only
    Avx2 = 1,    // AVX2 + FMA + F16C
    Avx512 = 2,  // AVX-512 F + BW + VL + VNNI on top of Avx2 (BF16 where present)
};

// "scalar", "avx2" or "avx512".
const char* isa_level_name(IsaLevel level);
// The level of that name; nullopt for any other string.
std::optional<IsaLevel> isa_level_from_name(const std::string& name);

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

    // The highest level the CPU supports.
    IsaLevel detected = IsaLevel::Scalar;

    // Whether this CPU can run the kernels of `l`.
    bool supports(IsaLevel l) const { return l <= detected; }
};

// Features of the running CPU, detected once (thread-safe). A model may run a lower level
// (LoadOptions::isa), never a higher one.
const CpuFeatures& cpu_features();

}  // namespace pk
