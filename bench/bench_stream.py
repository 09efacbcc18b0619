#!/usr/bin/env python3
"""Streaming: live load (concurrent real-time streams) and offline chunked throughput.

    python3 bench/bench_stream.py live --streams 4,8,12,16,20,24 --backends 1,2 --seconds 60
    python3 bench/bench_stream.py offline --minutes 10 --reps 3
    python3 bench/bench_stream.py all --json stream-110m.json

Needs bench/make_bench_models.py's outputs (.cache/bench/110m/model-q8_0.gguf and the clips)
and a Release libparakeet ($PARAKEET_LIBRARY, else build-bench/).

live: N threads each feed their own stream (10-2-2 by default) with audio at 1x speed, 0.1 s
per feed, on a context with K backends (threads split between them). For every chunk the
latency is the time from the arrival of the last sample the chunk needs (the end of its right
context: the chunk's own latency, chunk + right, is not counted) to the return of the feed
that made its text final. p50 / p95 over every chunk of every stream after the first chunk
of each (warm-up). The largest N with p95 <= --budget (1 s) is reported for each K, and the
best K. Ceiling: each 2 s chunk re-encodes up to 14 s of audio, so about RTFx / 7 streams.

offline: one 10-minute file, a 10-10-5 stream fed in one go against one full pass
(Context.transcribe), interleaved A B A B, medians; RTFx = audio seconds / wall seconds.
"""
import argparse
import json
import os
import sys
import threading
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
FEED_SEC = 0.1
RATE = 16000


def load_clip(minutes):
    """`minutes` of the bench clips (clip_10s, 23s, 7s, 30s in turn) as 16 kHz float32."""
    from parakeet_py import load_audio

    parts = [load_audio(os.path.join(bl.CACHE, "clips", f"{c}.wav")) for c in ("clip_10s", "clip_23s", "clip_7s",
                                                                               "clip_30s")]
    one = np.concatenate(parts)
    need = int(minutes * 60 * RATE)
    return np.tile(one, need // one.size + 1)[:need]


def chunk_ready_times(n_chunks, window):
    """Audio seconds at which chunk i's window is complete (NeMo's schedule: the first chunk
    ends at chunk + right, each next one chunk later)."""
    left, chunk, right = window
    return [chunk + right + i * chunk for i in range(n_chunks)]


def one_live_stream(ctx, audio, window, start, out, offset):
    """Feeds `audio` at 1x from wall time `start`; appends each chunk's latency to `out`."""
    left, chunk, right = window
    step = int(FEED_SEC * RATE)
    s = ctx.stream(chunk, left, right)
    seen = 0
    ready = chunk_ready_times(int(audio.size / RATE / chunk) + 2, window)
    with s:
        for i, begin in enumerate(range(0, audio.size, step)):
            due = start + offset + (begin + step) / RATE  # when this block has "arrived"
            pause = due - time.perf_counter()
            if pause > 0:
                time.sleep(pause)
            u = s.feed(audio[begin:begin + step])
            now = time.perf_counter()
            for c in range(seen, u.chunks):
                if c > 0:  # the first chunk of each stream warms up its buffers
                    out.append(now - (start + offset + ready[c]))
            seen = u.chunks
        s.finalize()


def live_run(model, n_streams, backends, seconds, window):
    from parakeet_py import Context

    audio = load_clip(seconds / 60)
    with Context(model, concurrency=backends) as ctx:
        ctx.transcribe(audio[:10 * RATE], sample_rate=RATE)  # warm every backend's arena once
        latencies = []
        start = time.perf_counter() + 0.5
        # Streams start staggered over one chunk, as independent speakers would.
        threads = [threading.Thread(target=one_live_stream,
                                    args=(ctx, np.roll(audio, 7919 * i), window, start, latencies,
                                          window[1] * i / n_streams))
                   for i in range(n_streams)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    lat = np.array(latencies)
    return {"streams": n_streams, "backends": backends, "chunks": int(lat.size),
            "p50": float(np.percentile(lat, 50)), "p95": float(np.percentile(lat, 95)),
            "max": float(lat.max())}


def live(args):
    window = tuple(float(v) for v in args.window.split(","))
    rows, best = [], {}
    for k in [int(v) for v in args.backends.split(",")]:
        for n in [int(v) for v in args.streams.split(",")]:
            r = live_run(args.model, n, k, args.seconds, window)
            rows.append(r)
            print(f"K={k} N={n}: p50 {r['p50']:.3f} s  p95 {r['p95']:.3f} s  max {r['max']:.3f} s "
                  f"({r['chunks']} chunks)", flush=True)
            if r["p95"] <= args.budget:
                best[k] = max(best.get(k, 0), n)
            elif n > best.get(k, 0):
                break  # more streams only get slower
    print(bl.table(["K", "N", "p50 s", "p95 s", "max s"],
                   [[r["backends"], r["streams"], f"{r['p50']:.3f}", f"{r['p95']:.3f}", f"{r['max']:.3f}"]
                    for r in rows]))
    summary = {"window": window, "budget_sec": args.budget, "rows": rows,
               "max_streams_by_backends": best,
               "best": max(best.items(), key=lambda kv: kv[1]) if best else None}
    print(f"largest N with p95 <= {args.budget} s beyond chunk+right: {best} (best K, N: {summary['best']})")
    return summary


def offline(args):
    from parakeet_py import Context

    audio = load_clip(args.minutes)
    seconds = audio.size / RATE
    times = {"stream_10_10_5": [], "full_pass": []}
    with Context(args.model) as ctx:
        ctx.transcribe(audio[:10 * RATE], sample_rate=RATE)  # warm-up

        def stream():
            with ctx.stream(10.0, 10.0, 5.0) as s:
                s.feed(audio)
                s.finalize()

        def full():
            ctx.transcribe(audio, sample_rate=RATE, timestamps=False)

        for _ in range(args.reps):
            for name, fn in (("stream_10_10_5", stream), ("full_pass", full)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    result = {name: {"median_sec": bl.median(ts), "rtfx": seconds / bl.median(ts)} for name, ts in times.items()}
    result["audio_sec"] = seconds
    result["stream_over_full_time"] = result["stream_10_10_5"]["median_sec"] / result["full_pass"]["median_sec"]
    print(bl.table(["run", "median s", "RTFx"],
                   [[n, f"{r['median_sec']:.2f}", f"{r['rtfx']:.1f}"] for n, r in result.items()
                    if isinstance(r, dict)]))
    print(f"10-10-5 chunked / full pass time: {result['stream_over_full_time']:.2f}x")
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("what", choices=["live", "offline", "all"])
    p.add_argument("--model", default=os.path.join(bl.CACHE, "110m", "model-q8_0.gguf"))
    p.add_argument("--window", default="10,2,2", help="LEFT,CHUNK,RIGHT seconds of the live streams")
    p.add_argument("--streams", default="4,8,12,16,20,24,32")
    p.add_argument("--backends", default="1,2")
    p.add_argument("--seconds", type=float, default=60.0, help="audio per live stream")
    p.add_argument("--budget", type=float, default=1.0, help="p95 latency budget beyond chunk + right, seconds")
    p.add_argument("--minutes", type=float, default=10.0, help="offline: length of the file")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--json")
    args = p.parse_args()
    if "PARAKEET_LIBRARY" not in os.environ:
        os.environ["PARAKEET_LIBRARY"] = bl.library_path()
    out = {"load": bl.loadavg()}
    if args.what in ("live", "all"):
        out["live"] = live(args)
    if args.what in ("offline", "all"):
        out["offline"] = offline(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)


if __name__ == "__main__":
    main()
