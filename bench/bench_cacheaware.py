#!/usr/bin/env python3
"""Cache-aware streaming: compute time per chunk and latency, for each attention context.

    .venv/bin/python bench/bench_cacheaware.py [--models 120m-streaming,600m-streaming] [--threads 2]
        [--type q8_0] [--seconds 20] [--json out.json]

The models are parakeet_py.synthetic_model's random-weight cache-aware shapes (the realtime
EOU 120M encoder, [70, 1]; nemotron-speech-streaming 0.6B, [70, 0] / [70, 1] / [70, 6] / [70, 13]),
written on first use to the synthetic model cache ($PARAKEET_CACHE). Random weights with the
synthetic joint bias emit almost no tokens, so the times are the encoder's, as with a trained
model. A stream is fed the clip 10 ms at a time (what a live source delivers, at any speed);
the feeds that ran a chunk are timed: that is the chunk's compute time, from the arrival of
its last sample to its text being final. End-to-end latency = the chunk's audio duration (the
model's algorithmic latency) + that compute time. One untimed warm-up stream per context.
Prints a table; --json writes the numbers.
"""
import argparse
import json
import os
import platform
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from parakeet_py import Context  # noqa: E402
from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model  # noqa: E402

RATE = 16000
FEED = 160  # 10 ms


def clip(seconds: float) -> np.ndarray:
    """Deterministic noise-like audio (the weights are random: the content does not matter)."""
    rng = np.random.default_rng(0)
    return (0.1 * rng.standard_normal(int(seconds * RATE))).astype(np.float32)


def chunk_times(ctx, context, audio):
    """Wall seconds of every feed that ran a chunk (the first, different-sized chunk left out)."""
    times = []
    with ctx.stream(att_context=list(context)) as s:
        chunks = 0
        for at in range(0, audio.size, FEED):
            t0 = time.perf_counter()
            u = s.feed(audio[at:at + FEED])
            dt = time.perf_counter() - t0
            if u.chunks > chunks:
                if chunks > 0:
                    times.append(dt / (u.chunks - chunks))
                chunks = u.chunks
        s.finalize()
    return times


def isa() -> str:
    flags = open("/proc/cpuinfo").read() if os.path.exists("/proc/cpuinfo") else ""
    return "avx512 (vnni)" if "avx512_vnni" in flags else "avx2" if "avx2" in flags else platform.machine()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="120m-streaming,600m-streaming")
    ap.add_argument("--type", default="q8_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--json")
    args = ap.parse_args()
    audio = clip(args.seconds)
    rows = []
    for name in args.models.split(","):
        path = ensure_synthetic_model(ARCHS[name], args.type,
                                      on_generate=lambda p: print(f"writing {p} ...", file=sys.stderr))
        with Context(path, threads=args.threads) as ctx:
            frame_ms = 1000.0 * 8 * 160 / RATE
            for c in ctx.info["streaming"]["contexts"]:
                context = (c["left"], c["right"])
                chunk_times(ctx, context, audio[: 2 * RATE])  # warm-up
                t = sorted(chunk_times(ctx, context, audio))
                med, p90 = statistics.median(t) * 1e3, t[int(0.9 * (len(t) - 1))] * 1e3
                chunk_ms = frame_ms * (context[1] + 1)
                rows.append({"model": name, "type": args.type, "threads": args.threads, "att_context": list(context),
                             "chunk_ms": chunk_ms, "chunks": len(t), "compute_ms_median": round(med, 2),
                             "compute_ms_p90": round(p90, 2), "latency_ms_median": round(chunk_ms + med, 1),
                             "rtfx": round(chunk_ms / med, 1), "isa": isa()})
                r = rows[-1]
                print(f"{name:16s} {args.type} {args.threads}t ctx {str(list(context)):10s} chunk {chunk_ms:6.0f} ms  "
                      f"compute median {r['compute_ms_median']:7.2f} ms  p90 {r['compute_ms_p90']:7.2f} ms  "
                      f"latency {r['latency_ms_median']:7.1f} ms  ({r['chunks']} chunks, {r['isa']})", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
