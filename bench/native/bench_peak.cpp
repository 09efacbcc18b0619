// One core's peak of the matmul products, measured: tight loops of independent zmm vfmadd231ps
// (f32) and zmm vpdpbusd (int8 VNNI), 12 accumulators each (more than latency x pipes on any
// CPU we run), no loads. Prints one JSON line per unit that the CPU has:
//   {"unit": "f32_fma_zmm", "gflops": ..., "gflops_per_cpu_second": ...}
// GFLOP/s counts 2 operations per multiply-add (16 per zmm FMA, 128 per zmm vpdpbusd), the
// convention of bench_matmul, so bench/bench_matmul.py divides one by the other for its "% of
// peak" column. Usage: bench_peak [--seconds S] (0.2 by default, per unit).
#include <immintrin.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "bench_timing.h"

namespace {

constexpr long kInner = 1000;  // iterations of 12 instructions between clock reads

// The asm keeps each instruction (the compiler would fold or drop products it can see through).
__attribute__((target("avx512f"))) void fma_loop(long n) {
    __m512 a0 = _mm512_set1_ps(1.0f), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
           a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    const __m512 x = _mm512_set1_ps(0.999f), y = _mm512_set1_ps(1e-7f);
    for (long i = 0; i < n; ++i) {
        __asm__ volatile(
            "vfmadd231ps %[x], %[y], %[a0]\n\tvfmadd231ps %[x], %[y], %[a1]\n\t"
            "vfmadd231ps %[x], %[y], %[a2]\n\tvfmadd231ps %[x], %[y], %[a3]\n\t"
            "vfmadd231ps %[x], %[y], %[a4]\n\tvfmadd231ps %[x], %[y], %[a5]\n\t"
            "vfmadd231ps %[x], %[y], %[a6]\n\tvfmadd231ps %[x], %[y], %[a7]\n\t"
            "vfmadd231ps %[x], %[y], %[a8]\n\tvfmadd231ps %[x], %[y], %[a9]\n\t"
            "vfmadd231ps %[x], %[y], %[a10]\n\tvfmadd231ps %[x], %[y], %[a11]"
            : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4),
              [a5] "+v"(a5), [a6] "+v"(a6), [a7] "+v"(a7), [a8] "+v"(a8), [a9] "+v"(a9),
              [a10] "+v"(a10), [a11] "+v"(a11)
            : [x] "v"(x), [y] "v"(y));
    }
}

__attribute__((target("avx512f,avx512vnni"))) void vnni_loop(long n) {
    __m512i a0 = _mm512_setzero_si512(), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0, a6 = a0,
            a7 = a0, a8 = a0, a9 = a0, a10 = a0, a11 = a0;
    const __m512i x = _mm512_set1_epi8(1), y = _mm512_set1_epi8(1);
    for (long i = 0; i < n; ++i) {
        __asm__ volatile(
            "vpdpbusd %[x], %[y], %[a0]\n\tvpdpbusd %[x], %[y], %[a1]\n\t"
            "vpdpbusd %[x], %[y], %[a2]\n\tvpdpbusd %[x], %[y], %[a3]\n\t"
            "vpdpbusd %[x], %[y], %[a4]\n\tvpdpbusd %[x], %[y], %[a5]\n\t"
            "vpdpbusd %[x], %[y], %[a6]\n\tvpdpbusd %[x], %[y], %[a7]\n\t"
            "vpdpbusd %[x], %[y], %[a8]\n\tvpdpbusd %[x], %[y], %[a9]\n\t"
            "vpdpbusd %[x], %[y], %[a10]\n\tvpdpbusd %[x], %[y], %[a11]"
            : [a0] "+v"(a0), [a1] "+v"(a1), [a2] "+v"(a2), [a3] "+v"(a3), [a4] "+v"(a4),
              [a5] "+v"(a5), [a6] "+v"(a6), [a7] "+v"(a7), [a8] "+v"(a8), [a9] "+v"(a9),
              [a10] "+v"(a10), [a11] "+v"(a11)
            : [x] "v"(x), [y] "v"(y));
    }
}

// Runs loop in rounds of kInner iterations for `seconds`; ops = operations per iteration.
void measure(const char* unit, void (*loop)(long), double ops, double seconds) {
    loop(kInner);  // warm-up (and the zmm units' power-up)
    long rounds = 0;
    const double c0 = bench::cpu_seconds();
    const auto t0 = bench::Clock::now();
    do {
        loop(kInner);
        ++rounds;
    } while (std::chrono::duration<double>(bench::Clock::now() - t0).count() < seconds);
    const double wall = std::chrono::duration<double>(bench::Clock::now() - t0).count();
    const double cpu = bench::cpu_seconds() - c0;
    const double total = ops * kInner * static_cast<double>(rounds);
    std::printf("{\"unit\": \"%s\", \"gflops\": %.1f, \"gflops_per_cpu_second\": %.1f}\n", unit,
                total / wall / 1e9, total / cpu / 1e9);
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 0.2;
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "--seconds") && i + 1 < argc) {
            seconds = std::atof(argv[++i]);
        } else {
            std::fprintf(stderr, "usage: %s [--seconds S]\n", argv[0]);
            return 2;
        }
    }
    if (!__builtin_cpu_supports("avx512f")) {
        std::fprintf(stderr, "this CPU has no AVX-512: nothing to measure\n");
        return 1;
    }
    measure("f32_fma_zmm", fma_loop, 12 * 16 * 2, seconds);
    if (__builtin_cpu_supports("avx512vnni")) measure("int8_vpdpbusd_zmm", vnni_loop, 12 * 64 * 2, seconds);
    return 0;
}
