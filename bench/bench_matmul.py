#!/usr/bin/env python3
"""Matrix-product throughput: our kernels (bench_matmul) against numpy's sgemm.

For every shape, interleaved in one run: numpy (OpenBLAS, one thread) computing x @ W.T in
float32, then our f32 / f16 / q8_0 kernels with 1 and 2 threads at each ISA level of --levels
the CPU has (PARAKEET_CPU=<level>; avx2 and avx512 by default), plus the opt-in bf16 kernels
(PARAKEET_BF16's vdpbf16ps products, F32 weights rounded at packing) at the avx512 level where
the CPU has AVX512_BF16. The whole sequence is repeated
--rounds times and each number is the median over rounds of per-round medians (GFLOP/s =
2 M N K / time). Prints a table per level and checks the targets of the issues:

  f32, 1 thread    >= 0.85 x numpy sgemm (1 thread)          (every level)
  q8_0, 1 thread   >= 1.5  x our f32                          (every level)
  f16, 1 thread    >= 0.9  x our f32                          (every level)
  2 threads        >= 1.8  x 1 thread, on the large shapes (2 M N K >= 1e9)
  avx512 q8_0, 1 thread  >= 2.2 x avx2 q8_0; 2 threads >= 1.85 x 1 thread (large shapes)

Run it with the OpenBLAS overrides some machines set removed, e.g.
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE python3 bench/bench_matmul.py --build-dir build
--clock cpu times the 1-thread runs in process CPU time, which a busy machine disturbs less
(the 2-thread speed-up is always wall time).

The "% pk" columns put the 1-thread f32 and q8_0 figures against this core's peak, measured
at the start by bench_peak (tight loops of independent zmm vfmadd231ps and vpdpbusd, timed
by the same clock): the ceiling of a zmm kernel, whatever the level that ran.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

os.environ["OPENBLAS_NUM_THREADS"] = "1"  # before numpy is imported
import numpy as np  # noqa: E402

TYPES = ("f32", "f16", "q8_0")


def blas_info():
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return "threadpoolctl not installed"
    infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if not infos:
        return "no BLAS found by threadpoolctl"
    i = infos[0]
    return "%s %s, kernel %s, %s thread(s)" % (
        i.get("internal_api"), i.get("version"), i.get("architecture"), i.get("num_threads"))


def time_numpy(M, K, N, reps, min_time, clock):
    rng = np.random.default_rng(0)
    x = rng.uniform(-1, 1, (M, K)).astype(np.float32)
    w = rng.uniform(-1, 1, (N, K)).astype(np.float32)
    x @ w.T  # warm-up
    times = []
    start = time.perf_counter()
    while len(times) < reps or time.perf_counter() - start < min_time:
        w0, c0 = time.perf_counter(), time.process_time()
        x @ w.T
        times.append(time.process_time() - c0 if clock == "cpu" else time.perf_counter() - w0)
    return 2.0 * M * N * K / statistics.median(times) / 1e9


def run_bench(bench, level, configs, reps, min_time):
    env = dict(os.environ, PARAKEET_CPU=level)
    out = subprocess.run([bench, "--reps", str(reps), "--min-time", str(min_time)] + configs,
                         check=True, capture_output=True, text=True, env=env).stdout
    return [json.loads(line) for line in out.splitlines()]


def measure_peaks(build_dir, clock):
    """GFLOP/s of one core's zmm FMA ("f32") and vpdpbusd ("q8_0") loops; {} without AVX-512."""
    prog = os.path.join(build_dir, "bench", "bench_peak")
    res = subprocess.run([prog, "--seconds", "0.3"], capture_output=True, text=True)
    if res.returncode != 0:
        print("no peak measured: %s" % (res.stderr.strip() or "bench_peak failed"))
        return {}
    key = "gflops_per_cpu_second" if clock == "cpu" else "gflops"
    units = {json.loads(line)["unit"]: json.loads(line)[key] for line in res.stdout.splitlines()}
    return {t: units[u] for t, u in (("f32", "f32_fma_zmm"), ("q8_0", "int8_vpdpbusd_zmm"))
            if u in units}


def time_ours(bench, level, types, M, K, N, reps, min_time):
    configs = ["%s:%d:%d:%d:%d" % (t, M, K, N, th) for th in (1, 2) for t in types]
    return {(r["type"], r["threads"]): r
            for r in run_bench(bench, level, configs, reps, min_time)}


def available_levels(bench, wanted):
    """The levels of `wanted` this CPU runs (a level it lacks runs as a lower one)."""
    return [lv for lv in wanted
            if run_bench(bench, lv, ["f32:1:32:16:1"], 1, 0.0)[0]["isa"] == lv]


def level_types(bench, level):
    """TYPES, plus bf16 at the avx512 level when the CPU runs it (bench_matmul fails otherwise)."""
    if level != "avx512":
        return TYPES
    try:
        run_bench(bench, level, ["bf16:1:32:16:1"], 1, 0.0)
    except subprocess.CalledProcessError:
        return TYPES
    return TYPES + ("bf16",)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    ap.add_argument("--M", type=int, nargs="+", default=[125, 500, 1000])
    ap.add_argument("--KN", type=int, nargs="+", default=[512, 2048],
                    help="sizes used for both K and N (all pairs)")
    ap.add_argument("--KxN", nargs="+", metavar="KxN",
                    help="the K x N pairs to run instead of --KN's, e.g. 512x2048 2048x512")
    ap.add_argument("--levels", nargs="+", default=["avx2", "avx512"],
                    help="ISA levels to compare (PARAKEET_CPU values); missing ones are skipped")
    ap.add_argument("--json", help="also write the results here")
    args = ap.parse_args()

    bench = os.path.join(args.build_dir, "bench", "bench_matmul")
    if not os.path.exists(bench):
        sys.exit("%s not found: build the bench_matmul target first" % bench)
    for var in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE"):
        if var in os.environ:
            print("warning: %s=%s is set; it may slow numpy (see the docstring)"
                  % (var, os.environ[var]))
    try:
        pairs = ([tuple(int(v) for v in p.split("x")) for p in args.KxN] if args.KxN
                 else [(K, N) for K in args.KN for N in args.KN])
    except ValueError:
        sys.exit("--KxN takes pairs like 512x2048")
    if any(len(p) != 2 for p in pairs):
        sys.exit("--KxN takes pairs like 512x2048")
    shapes = [(M, K, N) for M in args.M for K, N in pairs]
    print("numpy %s, BLAS: %s" % (np.__version__, blas_info()))
    print("load average before: %s" % " ".join(open("/proc/loadavg").read().split()[:3]))

    peaks = measure_peaks(args.build_dir, args.clock)
    print("core peak (%s clock): %s" % (args.clock, ", ".join(
        "%s %.0f GFLOP/s" % (t, g) for t, g in peaks.items()) or "none"))

    levels = available_levels(bench, args.levels)
    if not levels:
        sys.exit("none of the levels %s runs on this CPU" % " ".join(args.levels))
    print("levels: %s" % " ".join(levels))
    types = {lv: level_types(bench, lv) for lv in levels}

    # "<level>_<type>_1t" uses the chosen clock; the speed-up compares wall times ("_wall").
    keys = ["numpy"] + ["%s_%s_%s" % (lv, t, k) for lv in levels for t in types[lv]
                        for k in ("1t", "1t_wall", "2t_wall")]
    samples = {s: {k: [] for k in keys} for s in shapes}
    for _ in range(args.rounds):
        for s in shapes:
            M, K, N = s
            samples[s]["numpy"].append(time_numpy(M, K, N, args.reps, args.min_time, args.clock))
            for lv in levels:
                ours = time_ours(bench, lv, types[lv], M, K, N, args.reps, args.min_time)
                for (t, th), r in ours.items():
                    samples[s]["%s_%s_%dt_wall" % (lv, t, th)].append(r["gflops"])
                    if th == 1:
                        samples[s]["%s_%s_1t" % (lv, t)].append(
                            r["gflops_per_cpu_second"] if args.clock == "cpu" else r["gflops"])
    print("load average after:  %s" % " ".join(open("/proc/loadavg").read().split()[:3]))

    res = {s: {k: statistics.median(v) for k, v in samples[s].items()} for s in shapes}

    def speedup(r, lv, t):
        return r["%s_%s_2t_wall" % (lv, t)] / r["%s_%s_1t_wall" % (lv, t)]

    def of_peak(gflops, t):
        return "%.0f%%" % (100.0 * gflops / peaks[t]) if t in peaks else "-"

    def print_table(title, header, rows):
        print("\n" + title + "\n")
        try:
            from tabulate import tabulate
            print(tabulate(rows, headers=header, tablefmt="github"))
        except ImportError:
            print(" | ".join(header))
            for row in rows:
                print(" | ".join(str(c) for c in row))

    for lv in levels:
        header = ["M", "K", "N", "numpy", "f32", "f32 % pk", "f32/np", "f16", "f16/f32", "q8_0",
                  "q8 % pk", "q8/f32", "f32 2T/1T", "f16 2T/1T", "q8 2T/1T"]
        rows = []
        for s, r in res.items():
            g = {t: r["%s_%s_1t" % (lv, t)] for t in TYPES}
            rows.append(list(s) + [
                "%.1f" % r["numpy"], "%.1f" % g["f32"], of_peak(g["f32"], "f32"),
                "%.2f" % (g["f32"] / r["numpy"]), "%.1f" % g["f16"], "%.2f" % (g["f16"] / g["f32"]),
                "%.1f" % g["q8_0"], of_peak(g["q8_0"], "q8_0"), "%.2f" % (g["q8_0"] / g["f32"]),
                "%.2f" % speedup(r, lv, "f32"), "%.2f" % speedup(r, lv, "f16"),
                "%.2f" % speedup(r, lv, "q8_0")])
            if "bf16" in types[lv]:
                b = r["%s_bf16_1t" % lv]
                rows[-1] += ["%.1f" % b, "%.2f" % (b / g["f32"]), "%.2f" % speedup(r, lv, "bf16")]
        if "bf16" in types[lv]:
            header += ["bf16", "bf16/f32", "bf16 2T/1T"]
        print_table("%s: GFLOP/s (1 thread, %s clock; medians of %d rounds); 2T/1T in wall time"
                    % (lv, args.clock, args.rounds), header, rows)
    if "avx2" in levels and "avx512" in levels:
        header = ["M", "K", "N"] + ["%s %s" % (t, k) for t in TYPES
                                    for k in ("avx2", "avx512", "x")] + ["q8 2T avx512"]
        rows = []
        for s, r in res.items():
            row = list(s)
            for t in TYPES:
                a2, a5 = r["avx2_%s_1t" % t], r["avx512_%s_1t" % t]
                row += ["%.1f" % a2, "%.1f" % a5, "%.2f" % (a5 / a2)]
            rows.append(row + ["%.1f" % r["avx512_q8_0_2t_wall"]])
        print_table("avx512 against avx2: GFLOP/s, 1 thread (x = avx512 / avx2)", header, rows)

    large = [s for s in shapes if 2.0 * s[0] * s[1] * s[2] >= 1e9]
    checks = []
    for lv in levels:
        def worst(f):
            return min(f(res[s]) for s in shapes)
        checks += [
            ("%s f32 >= 0.85 x numpy" % lv, worst(lambda r: r[lv + "_f32_1t"] / r["numpy"]), 0.85),
            ("%s q8_0 >= 1.5 x f32" % lv,
             worst(lambda r: r[lv + "_q8_0_1t"] / r[lv + "_f32_1t"]), 1.5),
            ("%s f16 >= 0.9 x f32" % lv,
             worst(lambda r: r[lv + "_f16_1t"] / r[lv + "_f32_1t"]), 0.9),
        ]
        if large:
            checks.append(("%s 2 threads >= 1.8 x 1 thread (large shapes)" % lv,
                           min(speedup(res[s], lv, t) for s in large for t in TYPES), 1.8))
    if "avx2" in levels and "avx512" in levels:
        checks.append(("avx512 q8_0 >= 2.2 x avx2 q8_0",
                       min(res[s]["avx512_q8_0_1t"] / res[s]["avx2_q8_0_1t"] for s in shapes),
                       2.2))
        if large:
            checks.append(("avx512 q8_0 2 threads >= 1.85 x 1 (large shapes)",
                           min(speedup(res[s], "avx512", "q8_0") for s in large), 1.85))
    print("\ntargets (worst shape):")
    for name, worst_seen, want in checks:
        print("  %-50s worst %.2f  %s" % (name, worst_seen, "ok" if worst_seen >= want else "MISSED"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([{"M": s[0], "K": s[1], "N": s[2], **res[s]} for s in shapes], f, indent=1)


if __name__ == "__main__":
    main()
