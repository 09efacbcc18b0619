#!/usr/bin/env python3
"""Cache-aware streaming: compute per chunk and latency for each attention context, against
NeMo in the same run, and how many live streams one machine serves at real time.

    .venv/bin/python bench/bench_cacheaware.py [--models 120m-streaming,600m-streaming] [--threads 2]
        [--type q8_0] [--seconds 8] [--rounds 3] [--nemo .nemo/bin/python | --no-nemo] [--nemo-steps N]
        [--streams 8,16,24,32 --stream-seconds 10 --backends 2] [--json out.json]

The models are parakeet_py.synthetic_model's random-weight cache-aware shapes (the realtime
EOU 120M encoder, [70, 1]; nemotron-speech-streaming 0.6B, [70, 0] / [70, 1] / [70, 6] /
[70, 13]), written on first use to the synthetic model cache. Random weights emit almost no
tokens, so the times are the encoder's, as with a trained model.

Per chunk: a stream is fed the clip 10 ms at a time (what a live source delivers); the feeds
that ran a chunk are timed (wall and process CPU time): that is the chunk's compute, from the
arrival of its last sample to its text being final; end-to-end latency = the chunk's audio (the
model's algorithmic latency) + that compute. NeMo: the same shapes built with NeMo's classes
(bench/nemo_cacheaware_worker.py, in the NeMo venv, torch on the same thread count), timed per
conformer_stream_step. Rounds interleave ours and NeMo's for every model and context; a figure
is the median over rounds of each round's median (the first and last chunks left out). One
untimed warm-up stream per context.

Live streams (--streams): N streams of the first model at its default context, each on its own
thread fed 160 ms blocks at real time (a block is due when its last sample would have been
spoken), on a pool of --backends backends of threads/backends threads each; the latency of a
block is the time from it being due to its feed returning (the text of every chunk it completed
is then final). Reports the p50 / p95 / max over every block after the first second.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

from parakeet_py import Context  # noqa: E402
from parakeet_py.synthetic_model import ARCHS, ensure_synthetic_model  # noqa: E402

RATE = 16000
FEED = 160  # 10 ms
FRAME_MS = 1000.0 * 8 * 160 / RATE


def clip(seconds: float) -> np.ndarray:
    """Deterministic noise-like audio (the weights are random: the content does not matter);
    the NeMo worker draws the same."""
    rng = np.random.default_rng(0)
    return (0.1 * rng.standard_normal(int(seconds * RATE))).astype(np.float32)


def chunk_times(ctx, context, audio):
    """(wall, CPU) seconds of every feed that ran one chunk, the first and the last left out."""
    times = []
    with ctx.stream(att_context=list(context)) as s:
        chunks = 0
        for at in range(0, audio.size, FEED):
            t0, c0 = time.perf_counter(), time.process_time()
            u = s.feed(audio[at:at + FEED])
            dt, dc = time.perf_counter() - t0, time.process_time() - c0
            if u.chunks > chunks:
                if chunks > 0:
                    times.append((dt / (u.chunks - chunks), dc / (u.chunks - chunks)))
                chunks = u.chunks
        s.finalize()
    return times[:-1]


def medians(times):
    if not times:
        raise SystemExit("no chunk was timed: give more --seconds (a 1120 ms context needs at least 4)")
    return (statistics.median(t[0] for t in times) * 1e3, statistics.median(t[1] for t in times) * 1e3)


class Nemo:
    """The NeMo worker process (bench/nemo_cacheaware_worker.py)."""

    def __init__(self, python: str, models: str, threads: int) -> None:
        self.p = subprocess.Popen([python, os.path.join(ROOT, "bench", "nemo_cacheaware_worker.py"), "--models",
                                   models, "--threads", str(threads)], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)
        self.info = json.loads(self.p.stdout.readline())

    def times(self, model: str, context, seconds: float, max_steps=None):
        self.p.stdin.write(json.dumps({"model": model, "context": list(context), "seconds": seconds,
                                       "max_steps": max_steps}) + "\n")
        self.p.stdin.flush()
        return [tuple(t) for t in json.loads(self.p.stdout.readline())["times"]]

    def close(self) -> None:
        self.p.stdin.close()
        self.p.wait(timeout=60)


def per_chunk(args, paths, nemo):
    audio = clip(args.seconds)
    contexts = {}
    for name, path in paths.items():
        with Context(path, threads=args.threads) as ctx:
            contexts[name] = [(c["left"], c["right"]) for c in ctx.info["streaming"]["contexts"]]
    ours = {(n, c): [] for n in paths for c in contexts[n]}
    theirs = {(n, c): [] for n in paths for c in contexts[n]}
    ctxs = {name: Context(path, threads=args.threads) for name, path in paths.items()}
    try:
        for name in paths:
            for c in contexts[name]:
                chunk_times(ctxs[name], c, audio[: 2 * RATE])  # warm-up
        for r in range(args.rounds):
            for name in paths:
                for c in contexts[name]:
                    ours[(name, c)].append(medians(chunk_times(ctxs[name], c, audio)))
                    if nemo is not None:
                        theirs[(name, c)].append(medians(nemo.times(name, c, args.seconds, args.nemo_steps)))
                    print(f"round {r + 1}: {name} {list(c)} ours {ours[(name, c)][-1][0]:.1f} ms"
                          + (f", NeMo {theirs[(name, c)][-1][0]:.1f} ms" if nemo is not None else ""),
                          file=sys.stderr, flush=True)
    finally:
        for ctx in ctxs.values():
            ctx.close()
    rows = []
    for (name, c), runs in ours.items():
        chunk_ms = FRAME_MS * (c[1] + 1)
        wall = statistics.median(m[0] for m in runs)
        cpu = statistics.median(m[1] for m in runs)
        row = {"model": name, "type": args.type, "threads": args.threads, "att_context": list(c),
               "chunk_ms": chunk_ms, "rounds": len(runs), "compute_ms": round(wall, 2), "cpu_ms": round(cpu, 2),
               "round_medians_ms": [round(m[0], 2) for m in runs], "latency_ms": round(chunk_ms + wall, 1)}
        if theirs[(name, c)]:
            nw = statistics.median(m[0] for m in theirs[(name, c)])
            row.update({"nemo_compute_ms": round(nw, 2),
                        "nemo_cpu_ms": round(statistics.median(m[1] for m in theirs[(name, c)]), 2),
                        "nemo_round_medians_ms": [round(m[0], 2) for m in theirs[(name, c)]],
                        "nemo_latency_ms": round(chunk_ms + nw, 1), "speedup": round(nw / wall, 2)})
        rows.append(row)
        print(f"{name:16s} {args.type} {args.threads}t {str(list(c)):10s} chunk {chunk_ms:5.0f} ms  compute "
              f"{row['compute_ms']:7.2f} ms (cpu {row['cpu_ms']:6.2f})  latency {row['latency_ms']:7.1f} ms"
              + (f"  | NeMo {row['nemo_compute_ms']:8.2f} ms (cpu {row['nemo_cpu_ms']:7.2f})  "
                 f"x{row['speedup']}" if "nemo_compute_ms" in row else ""), flush=True)
    return rows


def live_streams(path, n, seconds, backends, threads):
    """Block latencies (s) of n concurrent real-time streams, after each stream's first second."""
    audio = clip(seconds)
    block = int(0.16 * RATE)
    lat = []
    lock = threading.Lock()
    with Context(path, concurrency=backends, threads=max(1, threads // backends)) as ctx:
        streams = [ctx.stream() for _ in range(n)]
        start = time.perf_counter() + 0.5

        def run(s, offset):
            mine = []
            t0 = start + offset  # streams start staggered over one block, as live callers do
            for k, at in enumerate(range(0, audio.size - block + 1, block)):
                due = t0 + (k + 1) * block / RATE
                wait = due - time.perf_counter()
                if wait > 0:
                    time.sleep(wait)
                s.feed(audio[at:at + block])
                if (k + 1) * block >= RATE:
                    mine.append(time.perf_counter() - due)
            s.finalize()
            with lock:
                lat.extend(mine)

        threads_ = [threading.Thread(target=run, args=(s, i * 0.16 / n)) for i, s in enumerate(streams)]
        for t in threads_:
            t.start()
        for t in threads_:
            t.join()
        for s in streams:
            s.close()
    lat.sort()
    return lat


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="120m-streaming,600m-streaming")
    ap.add_argument("--type", default="q8_0")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seconds", type=float, default=8.0)
    ap.add_argument("--rounds", type=int, default=3)
    nemo_default = os.path.join(ROOT, ".nemo", "bin", "python")
    ap.add_argument("--nemo", default=nemo_default if os.path.exists(nemo_default) else None)
    ap.add_argument("--no-nemo", action="store_true")
    ap.add_argument("--nemo-steps", type=int, default=None,
                    help="time at most this many NeMo steps per context and round (NeMo is slow)")
    ap.add_argument("--no-chunks", action="store_true", help="skip the per-chunk figures")
    ap.add_argument("--streams", default="", help="comma list of concurrent live stream counts")
    ap.add_argument("--stream-seconds", type=float, default=10.0)
    ap.add_argument("--backends", type=int, default=2)
    ap.add_argument("--json")
    args = ap.parse_args()
    paths = {name: ensure_synthetic_model(ARCHS[name], args.type,
                                          on_generate=lambda p: print(f"writing {p} ...", file=sys.stderr))
             for name in args.models.split(",")}
    out = {"load_before": os.getloadavg(), "cpu": cpu_name()}
    if not args.no_chunks:
        nemo = None if args.no_nemo or not args.nemo else Nemo(args.nemo, args.models, args.threads)
        try:
            out["per_chunk"] = per_chunk(args, paths, nemo)
        finally:
            if nemo is not None:
                nemo.close()
    live = []
    for n in [int(v) for v in args.streams.split(",") if v]:
        lat = live_streams(next(iter(paths.values())), n, args.stream_seconds, args.backends, args.threads)
        row = {"streams": n, "blocks": len(lat), "p50_ms": round(1e3 * lat[len(lat) // 2], 1),
               "p95_ms": round(1e3 * lat[int(0.95 * (len(lat) - 1))], 1), "max_ms": round(1e3 * lat[-1], 1),
               "backends": args.backends, "load": os.getloadavg()[0]}
        live.append(row)
        print(f"{n:3d} live streams ({args.backends} backends): block latency p50 {row['p50_ms']} ms, p95 "
              f"{row['p95_ms']} ms, max {row['max_ms']} ms (load {row['load']:.1f})", flush=True)
    out["live"] = live
    out["load_after"] = os.getloadavg()
    print(f"load average before {out['load_before'][0]:.1f}, after {out['load_after'][0]:.1f}; {out['cpu']}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


def cpu_name() -> str:
    for line in open("/proc/cpuinfo"):
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return "?"


if __name__ == "__main__":
    sys.exit(main())
