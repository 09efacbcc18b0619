// CPU feature detection: the one place that decides which kernel code path runs.
//
// Kernels come in ISA levels, each in its own files (`*_avx2.cpp`, `*_avx512.cpp`) beside the
// portable code; a kernel picks the highest level it has that does not exceed
// cpu_features().level.
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
    // The level the kernels use unless a model was loaded with a lower one: `detected`.
    IsaLevel level = IsaLevel::Scalar;

    // The switches kernels test.
    bool has_avx2_fma_f16c() const { return level >= IsaLevel::Avx2; }
    bool has_avx512() const { return level >= IsaLevel::Avx512; }
    // vdpbf16ps is usable (only at the avx512 level, and only where the CPU has it).
    bool has_avx512_bf16() const { return has_avx512() && avx512bf16; }
};

// Features of the running CPU, detected once (thread-safe). A model may run a lower level
// (LoadOptions::isa), never a higher one.
const CpuFeatures& cpu_features();

}  // namespace pk
