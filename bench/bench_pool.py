#!/usr/bin/env python3
"""Backend pool: aggregate throughput of K backends x T threads, and the memory a pool costs.

    python3 bench/bench_pool.py throughput --model 110m       # K=1x2 vs K=2x1 vs K=1x1, median of 5
    python3 bench/bench_pool.py memory --model 110m           # K = 1, 2, 4 on 30 s clips
    python3 bench/bench_pool.py all --model 600m --json out.json

Needs bench/make_bench_models.py's outputs and a Release libparakeet (build-bench/ or
$PARAKEET_LIBRARY); libparakeet is driven through its C ABI with cffi (which releases the GIL
during C calls, so Python threads really run concurrently inside the library).

throughput: one context; 16 requests (7 s and 23 s clips alternating, 240 s of audio) are
submitted at once by 16 Python threads and queue for the context's backends (first come,
first served). Aggregate RTFx = total audio / wall time from the first submission to the last
result. Configurations (K backends x T threads each):
    1x2  no pool: the process-wide backend with 2 threads (parakeet_capi_set_threads(2))
    2x1  parakeet_capi_set_concurrency(ctx, 2, 1)
    1x1  no pool, parakeet_capi_set_threads(1)
Each round runs every configuration once (the order rotates), after an untimed warm-up of K
concurrent requests that brings each backend's arena to its working size. Every transcript of
every configuration must equal the first one's.

memory: one process per K (1, 2, 4 backends x 1 thread): load, then K threads transcribe the
30 s clip at the same time, twice (the arena consolidates its blocks at the second request).
Reported: parakeet_capi_pool_working_set_bytes (0 without a pool: K=1 is the process-wide
backend), peak RSS (VmHWM), and how much anonymous memory (RssAnon: heap, arenas, repacked
weights; the mapped GGUF is RssFile) the requests added after the model was loaded.
"""
import argparse
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

CONFIGS = {"1x2": (1, 2), "2x1": (2, 1), "1x1": (1, 1)}


def configure(pk, backends, threads):
    if backends <= 1:
        pk.set_concurrency(1, 0)  # back to the process-wide backend
        pk.set_threads(threads)
    else:
        assert pk.set_concurrency(backends, threads) == backends


def run_concurrently(pk, clips, n_threads=None):
    """Submits every clip at once from its own thread; returns (wall seconds, transcripts)."""
    texts = [None] * len(clips)
    errors = []
    start = threading.Barrier(len(clips) + 1)

    def one(i):
        ptr = pk.pcm(clips[i])
        start.wait()
        try:
            texts[i] = pk.transcribe(clips[i], ptr)
        except Exception as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(clips))]
    for t in threads:
        t.start()
    start.wait()
    t0 = time.perf_counter()
    for t in threads:
        t.join()
    wall = time.perf_counter() - t0
    if errors:
        raise errors[0]
    return wall, texts


def throughput(args):
    gguf = os.path.join(bl.CACHE, args.model, f"model-{args.type}.gguf")
    short = bl.read_wav(os.path.join(bl.CACHE, "clips", "clip_7s.wav"))
    long_ = bl.read_wav(os.path.join(bl.CACHE, "clips", "clip_23s.wav"))
    clips = [short if i % 2 == 0 else long_ for i in range(args.requests)]
    audio_s = sum(len(c) for c in clips) / 16000.0
    pk = bl.Parakeet(gguf, args.lib)
    names = args.configs.split(",")
    walls = {n: [] for n in names}
    reference, mismatches = None, []
    loads = [bl.loadavg()]
    busy_before = bl.cpu_busy()
    others = {n: [] for n in names}
    meter = bl.OthersCpu()
    for r in range(args.reps):
        order = names[r % len(names):] + names[:r % len(names)]
        for n in order:
            k, t = CONFIGS[n]
            configure(pk, k, t)
            run_concurrently(pk, [long_] * k)  # warm-up: every backend's arena at working size
            meter.start()
            wall, texts = run_concurrently(pk, clips)
            others[n].append(meter.stop())
            walls[n].append(wall)
            if reference is None:
                reference = texts
            elif texts != reference:
                mismatches.append((n, r))
        loads.append(bl.loadavg())
        print(f"round {r + 1}/{args.reps} load {loads[-1]:.2f}: " +
              " ".join(f"{n}={walls[n][-1]:.2f}s (others {others[n][-1]:.0%})" for n in names),
              file=sys.stderr, flush=True)
    configure(pk, 1, 0)
    res = {"model": args.model, "type": args.type, "requests": args.requests, "audio_seconds": audio_s,
           "reps": args.reps, "loadavg": loads, "cpu_busy_before": busy_before, "transcripts_equal": not mismatches,
           "mismatches": mismatches, "configs": {}}
    for n in names:
        m = bl.median(walls[n])
        res["configs"][n] = {"backends": CONFIGS[n][0], "threads_each": CONFIGS[n][1],
                             "median_wall_seconds": m, "aggregate_rtfx": audio_s / m, "walls": walls[n],
                             "others_cpu_share": others[n]}
    base = res["configs"].get("1x2")
    rows = [[n, f"{c['median_wall_seconds']:.2f}", f"{c['aggregate_rtfx']:.1f}",
             f"{c['aggregate_rtfx'] / base['aggregate_rtfx']:.2f}" if base else "-",
             f"{min(c['walls']):.2f}", f"{bl.median(c['others_cpu_share']):.0%}"]
            for n, c in res["configs"].items()]
    print(f"\n{args.model} {args.type}: {args.requests} requests (7 s / 23 s), {audio_s:.0f} s of audio, "
          f"median of {args.reps}; load average {min(loads):.2f}..{max(loads):.2f}; "
          f"CPU busy before {busy_before:.0%}")
    print(bl.table(["K x threads", "wall s", "aggregate RTFx", "vs 1x2", "best wall s",
                    "others' CPU (median)"], rows))
    print(f"transcripts equal across configurations: {res['transcripts_equal']}")
    return res


def memory_child(args):
    k = args.memory_child
    gguf = os.path.join(bl.CACHE, args.model, f"model-{args.type}.gguf")
    clip = bl.read_wav(os.path.join(bl.CACHE, "clips", "clip_30s.wav"))
    pk = bl.Parakeet(gguf, args.lib)
    info = pk.info()
    loaded = bl.memory()
    configure(pk, k, 1)
    for _ in range(2):
        run_concurrently(pk, [clip] * k)
    after = bl.memory()
    print(json.dumps({"backends": k, "working_set_bytes": pk.pool_working_set_bytes(),
                      "packed_bytes": info.get("packed_bytes"), "file_bytes": info.get("file_bytes"),
                      "loaded": loaded, "after": after}))
    return 0


def memory(args):
    res = {"model": args.model, "type": args.type, "clip": "clip_30s", "runs": []}
    for k in (1, 2, 4):
        argv = [sys.executable, os.path.abspath(__file__), "memory", "--model", args.model,
                "--type", args.type, "--memory-child", str(k)] + (["--lib", args.lib] if args.lib else [])
        out = subprocess.run(argv, check=True, capture_output=True, text=True).stdout
        res["runs"].append(json.loads(out.strip().splitlines()[-1]))
    rows = []
    for r in res["runs"]:
        k, ws = r["backends"], r["working_set_bytes"]
        d_anon = r["after"]["RssAnon"] - r["loaded"]["RssAnon"]
        rows.append([k, f"{bl.mb(ws):.0f}" if ws else "- (no pool)", f"{bl.mb(ws) / k:.0f}" if ws else "-",
                     f"{bl.mb(r['loaded']['RssAnon']):.0f}", f"{bl.mb(d_anon):.0f}",
                     f"{bl.mb(d_anon - ws):.0f}" if ws else "-",
                     f"{bl.mb(r['after']['RssFile']):.0f}", f"{bl.mb(r['after']['VmHWM']):.0f}"])
    r0 = res["runs"][0]
    print(f"\n{args.model} {args.type}: K concurrent 30 s requests (K x 1 thread, twice); "
          f"GGUF {bl.mb(r0['file_bytes'] or 0):.0f} MB, repacked weights {bl.mb(r0['packed_bytes'] or 0):.0f} MB")
    print(bl.table(["K", "pool working set MB", "per backend MB", "anon RSS after load MB",
                    "anon RSS added MB", "added - working set MB", "file RSS MB", "peak RSS MB"], rows))
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=("throughput", "memory", "all"))
    ap.add_argument("--model", default="110m")
    ap.add_argument("--type", default="f32", choices=("f32", "f16", "q8_0"))
    ap.add_argument("--configs", default=",".join(CONFIGS))
    ap.add_argument("--requests", type=int, default=16)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--lib", default=None, help="libparakeet.so (default: $PARAKEET_LIBRARY or build-bench)")
    ap.add_argument("--json", default=None)
    ap.add_argument("--memory-child", type=int, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child is not None:
        return memory_child(args)
    res = {}
    if args.what in ("throughput", "all"):
        res["throughput"] = throughput(args)
    if args.what in ("memory", "all"):
        res["memory"] = memory(args)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
