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

Before and after a change of the Python batch paths (issue 32: the local job through the
library's batch call), in one run:

    git worktree add /tmp/before <commit before>
    python3 bench/bench_batch.py --before /tmp/before [--short 200] [--seconds 2,5] \
        [--isa avx512,avx2] [--configs 1x2,2x1] [--rounds 3] [--json out.json]

runs the local job (model load excluded) on --short clips of noise (lengths drawn evenly from
--seconds, seeded, float WAVs) with the random-weight 110M q8_0 model of
parakeet_py.synthetic_model, each job in its own process with the parakeet_py of --before or of
this tree on its PYTHONPATH (the same libparakeet: $PARAKEET_LIBRARY or the tree's build), at
each kernel level ($PARAKEET_CPU), rounds interleaved (before, after, after, before, ...).
Reported per level and K x T: clips/s (median), the after/before ratio (median of the rounds'),
whether both wrote the same rows (they must), the load average before and after.
"""
import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import soundfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if "--job" not in sys.argv:  # a --job imports the parakeet_py of its PYTHONPATH: the tree under test
    sys.path.insert(0, REPO)
CACHE = os.path.join(REPO, ".cache", "bench")

from parakeet_py import Context, load_audio  # noqa: E402
from parakeet_py.batch import BatchOptions, read_rows, run_batch  # noqa: E402

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


def job(model, manifest, out, k, t):
    """One local job in this process (--job): its throughput and a digest of its rows."""
    stats = run_batch(model, [manifest], out, BatchOptions(concurrency=k, threads=t), overwrite=True)
    rows = sorted(read_rows(out), key=lambda r: r["id"])
    digest = hashlib.sha256(json.dumps(rows, sort_keys=True).encode()).hexdigest()
    print(json.dumps({"clips_per_s": stats.done / stats.wall_seconds, "rtfx": stats.rtfx, "rows": digest}))


def short_clips(folder, n, seconds, seed=32):
    """A manifest of ``n`` noise clips, their lengths drawn evenly from ``seconds`` (lo,hi)."""
    lo, hi = (float(x) for x in seconds.split(","))
    rng = np.random.default_rng(seed)
    lines = []
    for i in range(n):
        path = os.path.join(folder, f"s{i:04d}.wav")
        soundfile.write(path, (0.1 * rng.standard_normal(int(rng.uniform(lo, hi) * 16000))).astype(np.float32),
                        16000, subtype="FLOAT")
        lines.append(json.dumps({"id": f"s{i:04d}", "path": path}) + "\n")
    manifest = os.path.join(folder, "short.jsonl")
    with open(manifest, "w") as f:
        f.writelines(lines)
    return manifest


def before_after(args):
    """The local job of --before's tree against this tree's on short clips (see the docstring)."""
    from parakeet_py.synthetic_model import ensure_synthetic_model

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import benchlib as bl
    from bench_cacheaware import cpu_name

    model = str(ensure_synthetic_model())
    folder = tempfile.mkdtemp(prefix="bench_batch_short_")
    manifest = short_clips(folder, args.short, args.seconds)
    trees = {"before": os.path.abspath(args.before), "after": REPO}
    library = bl.library_path(os.environ.get("PARAKEET_LIBRARY"))
    results = []
    for isa in args.isa.split(","):
        for config in args.configs.split(","):
            k, t = map(int, config.split("x"))
            load_before, got = bl.loadavg(), {name: [] for name in trees}
            for r in range(args.rounds):
                for name in (("before", "after") if r % 2 == 0 else ("after", "before")):
                    env = dict(os.environ, PYTHONPATH=f"{trees[name]}{os.pathsep}{trees[name]}/cli",
                               PARAKEET_LIBRARY=library, PARAKEET_CPU=isa)
                    run = subprocess.run([sys.executable, os.path.abspath(__file__), "--job", model, manifest,
                                          os.path.join(folder, f"{name}.jsonl"), str(k), str(t)],
                                         env=env, capture_output=True, text=True, check=True)
                    got[name].append(json.loads(run.stdout.strip().splitlines()[-1]))
            speed = {name: [g["clips_per_s"] for g in runs] for name, runs in got.items()}
            results.append({"isa": isa, "K": k, "T": t, "clips_per_s": {n: bl.median(v) for n, v in speed.items()},
                            "ratio": bl.median([a / b for a, b in zip(speed["after"], speed["before"])]),
                            "rounds": speed, "same_rows": len({g["rows"] for v in got.values() for g in v}) == 1,
                            "load": [load_before, bl.loadavg()]})
            print(json.dumps(results[-1]), flush=True)
    print(f"{cpu_name()}; local job, {args.short} clips of {args.seconds.replace(',', '-')} s, 110M q8_0 synthetic, "
          f"{args.rounds} rounds")
    print(bl.table(["isa", "K x T", "before clips/s", "after clips/s", "ratio", "same rows", "load before / after"],
                   [[r["isa"], f"{r['K']}x{r['T']}", f"{r['clips_per_s']['before']:.2f}",
                     f"{r['clips_per_s']['after']:.2f}", f"{r['ratio']:.2f}x", "yes" if r["same_rows"] else "NO",
                     f"{r['load'][0]:.1f} / {r['load'][1]:.1f}"] for r in results]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "trees": trees, "clips": args.short, "seconds": args.seconds,
                       "results": results}, f, indent=1)
    return 0 if all(r["same_rows"] for r in results) else 1


def main():
    if sys.argv[1:2] == ["--job"]:
        model, manifest, out, k, t = sys.argv[2:7]
        return job(model, manifest, out, int(k), int(t))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", default=os.path.join(CACHE, "110m", "model-q8_0.gguf"))
    ap.add_argument("--clips", type=int, default=200)
    ap.add_argument("--configs", default="1x2,2x1", help="K x T pairs, comma separated")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--ray", action="store_true", help="also the Ray job (in-process Ray, one actor)")
    ap.add_argument("--json")
    ap.add_argument("--before", help="a checkout of the code to compare with: the local job before and after, on "
                                     "--short clips (see the docstring)")
    ap.add_argument("--short", type=int, default=200, help="--before: how many short clips")
    ap.add_argument("--seconds", default="2,5", help="--before: the short clips' shortest and longest length")
    ap.add_argument("--isa", default="avx512,avx2", help="--before: kernel levels, comma separated")
    ap.add_argument("--rounds", type=int, default=3, help="--before: rounds of each")
    args = ap.parse_args()
    if args.before:
        return before_after(args)
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
    sys.exit(main())
