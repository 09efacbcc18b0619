"""Corpus batch throughput: `parakeet-cli batch` (local) and the Ray Data job against direct
Context throughput (what `parakeet-cli bench` measures: audio decoded in memory first, K
threads submitting to a K-backend pool), on the same clips, interleaved.

    python3 bench/bench_batch.py --clips 200 --configs 1x2,2x1 --reps 1 --json batch.json

For each K x T (backends x threads each): direct RTFx, local batch RTFx (the job: manifest,
prefetch decoding the WAVs, rows to JSONL; model load excluded from both), and with --ray the
Ray job on this machine (in-process Ray, one actor of K x T; RTFx over the job's whole wall
time, so Ray's fixed cost per job is included) and that fixed cost alone (a 2-clip job).
Rounds are interleaved (direct, local, ray, then reversed); ratios are reported per round.
Clips: the bench clips (7, 10, 23, 30 s) in turn, one row each; the files stay in the page
cache, so storage reads are not measured.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)
CACHE = os.path.join(REPO, ".cache", "bench")

from parakeet_py import Context, load_audio  # noqa: E402
from parakeet_py.batch import BatchOptions, run_batch  # noqa: E402

CLIPS = ["clip_7s.wav", "clip_10s.wav", "clip_23s.wav", "clip_30s.wav"]


def write_manifest(folder, n):
    path = os.path.join(folder, "manifest.jsonl")
    with open(path, "w") as f:
        for i in range(n):
            f.write(json.dumps({"id": f"u{i:04d}", "path": os.path.join(CACHE, "clips", CLIPS[i % len(CLIPS)])}) + "\n")
    return path


def direct(model, manifest, k, t):
    """bench-style: decode everything first, then K threads transcribe from memory."""
    paths = [json.loads(line)["path"] for line in open(manifest)]
    with Context(model, concurrency=k, threads=t) as ctx:
        audio = {p: load_audio(p, target_rate=ctx.sample_rate) for p in set(paths)}
        with ThreadPoolExecutor(k) as pool:  # one warm-up request per backend
            list(pool.map(lambda p: ctx.transcribe(audio[p], sample_rate=ctx.sample_rate, timestamps=False),
                          paths[:k]))
            start = time.perf_counter()
            list(pool.map(lambda p: ctx.transcribe(audio[p], sample_rate=ctx.sample_rate, timestamps=False), paths))
            wall = time.perf_counter() - start
    seconds = sum(len(audio[p]) for p in paths) / ctx.sample_rate
    return seconds / wall


def local(model, manifest, k, t, folder):
    stats = run_batch(model, [manifest], os.path.join(folder, "out.jsonl"),
                      BatchOptions(concurrency=k, threads=t), overwrite=True)
    return stats.rtfx


def on_ray(model, manifest, k, t, folder):
    from parakeet_py.batch.ray_job import run_ray_job

    s = run_ray_job(model, [manifest], os.path.join(folder, "ray.jsonl"), BatchOptions(concurrency=k, threads=t),
                    num_cpus=k * t, batch_size=8, overwrite=True)
    return s["audio_seconds"] / s["wall_seconds"], s["wall_seconds"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(CACHE, "110m", "model-q8_0.gguf"))
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--configs", default="1x2,2x1", help="K x T pairs, comma separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--ray", action="store_true", help="also the Ray job (in-process Ray, one actor)")
    ap.add_argument("--json")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="bench_batch_")
    manifest = write_manifest(folder, args.clips)
    tiny = os.path.join(folder, "tiny")
    os.makedirs(tiny)
    tiny_manifest = write_manifest(tiny, 2)
    results = []
    if args.ray:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
        import ray

        start = time.perf_counter()
        cpus = max(k * t for k, t in (map(int, c.split("x")) for c in args.configs.split(","))) + 1
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        results.append({"ray_init_s": round(time.perf_counter() - start, 2)})
    for rep in range(args.reps):
        for config in args.configs.split(","):
            k, t = map(int, config.split("x"))
            order = ["direct", "local", "ray"] if args.ray else ["direct", "local"]
            if rep % 2:
                order.reverse()
            row = {"rep": rep, "K": k, "T": t, "load": open("/proc/loadavg").read().split()[0]}
            for name in order:
                if name == "direct":
                    row["direct_rtfx"] = direct(args.model, manifest, k, t)
                elif name == "local":
                    row["local_rtfx"] = local(args.model, manifest, k, t, folder)
                else:
                    row["ray_rtfx"], row["ray_wall_s"] = on_ray(args.model, manifest, k, t, folder)
                    row["ray_fixed_s"] = on_ray(args.model, tiny_manifest, k, t, tiny)[1]
            row["local_vs_direct"] = row["local_rtfx"] / row["direct_rtfx"]
            if args.ray:
                row["ray_vs_local"] = row["ray_rtfx"] / row["local_rtfx"]
            results.append(row)
            print(json.dumps({k2: (round(v, 3) if isinstance(v, float) else v) for k2, v in row.items()}), flush=True)
    ratios = [r["local_vs_direct"] for r in results if "local_vs_direct" in r]
    print(f"local batch / direct: median {statistics.median(ratios):.3f} over {len(ratios)} rounds")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
