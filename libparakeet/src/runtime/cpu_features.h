// CPU feature detection: the one place that decides which kernel code path runs.
#pragma once

namespace pk {

struct CpuFeatures {
    bool avx2 = false;
    bool fma = false;
    bool f16c = false;

    // The AVX2 kernels use AVX2 + FMA + F16C together; this is the switch they test.
    bool has_avx2_fma_f16c() const { return avx2 && fma && f16c; }
};

// Features of the running CPU, detected once (thread-safe). Setting the environment variable
// PARAKEET_CPU=scalar before the first call reports no features, which forces every kernel
// onto its portable path (the tests use it to check the fallback).
const CpuFeatures& cpu_features();

}  // namespace pk
