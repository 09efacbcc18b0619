// CPU feature detection: the one place that decides which kernel code path runs.
//
// Kernels come in ISA levels, each in its own files (`*_avx2.cpp`, `*_avx512.cpp`) beside the
// portable code; a kernel picks the highest level it has that does not exceed
// cpu_features().level.
#pragma once

namespace pk {

enum class IsaLevel {
    Scalar = 0,  // portable C++ only
    Avx2 = 1,    // AVX2 + FMA + F16C
    Avx512 = 2,  // AVX-512 F + BW + VL + VNNI on top of Avx2 (BF16 where present)
};

// "scalar", "avx2" or "avx512".
const char* isa_level_name(IsaLevel level);

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
    // The level the kernels use: `detected`, or lower when PARAKEET_CPU asks for it.
    IsaLevel level = IsaLevel::Scalar;
    // Set when PARAKEET_CPU names an unknown level or one above `detected` (then `level`
    // stays at `detected`); check_requested_isa() turns it into an error at load.
    const char* request_error = nullptr;

    // The switches kernels test.
    bool has_avx2_fma_f16c() const { return level >= IsaLevel::Avx2; }
    bool has_avx512() const { return level >= IsaLevel::Avx512; }
    // vdpbf16ps is usable (only at the avx512 level, and only where the CPU has it).
    bool has_avx512_bf16() const { return has_avx512() && avx512bf16; }
};

// Features of the running CPU, detected once (thread-safe). The environment variable
// PARAKEET_CPU=scalar|avx2|avx512, read at the first call, lowers the level (tests use it to
// check every path on one machine); it can never raise it.
const CpuFeatures& cpu_features();

// Throws InvalidInput when PARAKEET_CPU asked for a level this CPU does not have or for an
// unknown one. Model loading calls it, so the request fails loudly instead of silently
// running another level.
void check_requested_isa();

}  // namespace pk
