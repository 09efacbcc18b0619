#!/usr/bin/env python3
"""A/B of one request's stages: two builds' bench_batch_stages (bench/native/bench_batch_stages.cpp)
at B = 1, in alternating processes, and each stage's median over the rounds.

    python3 bench/bench_stages_ab.py --a OLD/bench/bench_batch_stages --b build/bench/bench_batch_stages \\
        --model M.gguf [--seconds 10] [--threads 1] [--rounds 4] [--reps 5]

Round r runs A then B (B then A on odd rounds), so load changes on a shared machine hit both
alike. Each process times --reps passes of one --seconds noise clip and prints each stage's
median CPU milliseconds; this prints, per stage, A's median over the rounds and its share of
A's total, the same for B, and B / A, with the CPU, the level (PARAKEET_CPU lowers it) and the
load average. A benchmark's printout, not a test.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys

STAGE_LINE = re.compile(r"(.*?)\s+([0-9.]+)$")


def run_once(binary: str, args) -> dict:
    """One process: {stage: ms} from bench_batch_stages' table (its two header lines skipped)."""
    out = subprocess.run([binary, args.model, "--batches", "1", "--threads", str(args.threads), "--seconds",
                          str(args.seconds), "--reps", str(args.reps)], capture_output=True, text=True, check=True)
    lines = out.stdout.splitlines()
    stages = {}
    for line in lines[2:]:
        m = STAGE_LINE.match(line)
        if m:
            stages[m.group(1).strip()] = float(m.group(2))
    return {"cpu": lines[0], "stages": stages}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--a", required=True, help="the baseline's bench_batch_stages")
    ap.add_argument("--b", required=True, help="the other build's bench_batch_stages")
    ap.add_argument("--model", required=True, help="an ASR GGUF with a transducer head")
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    runs = {"A": [], "B": []}
    loads = []
    for r in range(args.rounds):
        for name in ("A", "B") if r % 2 == 0 else ("B", "A"):
            loads.append(os.getloadavg()[0])
            runs[name].append(run_once(args.a if name == "A" else args.b, args))
    print(f"{runs['A'][0]['cpu']}; {os.path.basename(args.model)}, {args.seconds:g} s, {args.rounds} rounds; "
          f"load {min(loads):.1f}-{max(loads):.1f}")
    med = {name: {stage: statistics.median(run["stages"][stage] for run in rs) for stage in rs[0]["stages"]}
           for name, rs in runs.items()}
    print(f"{'stage':34s} {'A ms':>9s} {'share':>6s} {'B ms':>9s} {'share':>6s} {'B / A':>6s}")
    for stage, a in med["A"].items():
        b = med["B"].get(stage, float("nan"))
        print(f"{stage:34s} {a:9.3f} {100 * a / med['A']['total']:5.1f}% {b:9.3f} {100 * b / med['B']['total']:5.1f}% "
              f"{b / a:6.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
