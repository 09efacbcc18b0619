#!/usr/bin/env python3
"""Batched live streams: per-stream step cost against the batch size, at each ISA level.

    .venv/bin/python bench/bench_stream_batch.py [--model 120m-streaming] [--type q8_0]
        [--batches 1,2,4,8,16,32] [--seconds 6] [--threads 1] [--levels avx2 avx512] [--build-dir build]
        [--window 10,2,2] [--context L,R]

Runs native/bench_stream_batch.cpp (build the bench_stream_batch target) on parakeet_py's
random-weight model of that shape (written to the synthetic model cache on first use): the
steps of a cache-aware model (120m-streaming), or the buffered windows (--window: left, chunk,
right seconds) of an offline one (110m, 600m). Once per ISA level (PARAKEET_CPU); each run
prints the CPU, the level and its table: wall and CPU milliseconds per round of B streams'
chunks, per stream, and the speed-up of a stream's step against a lone stream's.
"""
import argparse
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="120m-streaming", choices=list(ARCHS))
    ap.add_argument("--type", default="q8_0", choices=("f32", "f16", "q8_0"))
    ap.add_argument("--batches", default="1,2,4,8,16,32")
    ap.add_argument("--seconds", type=float, default=6.0, help="audio per stream and batch size")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--levels", nargs="+", default=["avx2", "avx512"],
                    help="ISA levels (PARAKEET_CPU values); a level the CPU lacks fails its run")
    ap.add_argument("--build-dir", default="build")
    ap.add_argument("--window", default="10,2,2", help="an offline model's buffered window: left,chunk,right seconds")
    ap.add_argument("--context", help="a cache-aware model's attention context L,R, one of the model's (default: its "
                                      "first; the 0.6B shape's is [70, 0], 80 ms chunks, and [70, 1] gives 160 ms)")
    args = ap.parse_args()

    program = os.path.join(args.build_dir, "bench", "bench_stream_batch")
    if not os.path.exists(program):
        sys.exit(f"{program} not found: build the bench_stream_batch target first")
    model = ensure_synthetic_model(ARCHS[args.model], args.type,
                                   on_generate=lambda p: print(f"writing {p} ...", flush=True))
    failed = 0
    for level in args.levels:
        env = dict(os.environ, PARAKEET_CPU=level)
        cmd = [program, str(model), "--batches", args.batches, "--seconds", str(args.seconds),
               "--threads", str(args.threads), "--window", args.window] + \
            (["--context", args.context] if args.context else [])
        print(f"\n{args.model} {args.type}:", flush=True)
        failed |= subprocess.call(cmd, env=env)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
