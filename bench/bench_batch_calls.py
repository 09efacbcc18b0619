"""The library's batch call (parakeet_capi_transcribe_pcm_batch_json_lang) on many short clips: this
build, which runs the clips in batched encoder passes (model/offline/request_set.h), against a
build that runs them one by one (main's, before issue 32), each in its own process, rounds
interleaved (old, new, new, old, ...), at each ISA level asked for.

    python3 bench/bench_batch_calls.py --old /work/main/build/libparakeet/libparakeet.so \\
        --new build/libparakeet/libparakeet.so [--clips 64] [--seconds 2,5] [--rounds 3] \\
        [--isa avx512,avx2] [--threads 2] [--json out.json]

The model is the random-weight 110M q8_0 one of parakeet_py.synthetic_model (written to the
synthetic model cache on first use), on one backend of --threads threads. The clips are --clips
clips of noise, their lengths drawn evenly from --seconds (seeded: both builds get the same).
Every timed call transcribes them all; one untimed call warms each build first. Reported per
ISA level: clips per second (median over rounds), the new/old ratio (median of the per-round
ratios), the CPU, the load average before and after, and whether both builds' documents are
identical (they must be).
Random weights emit almost no tokens, so this times the front end and the encoder, which
batching changes.
"""
import argparse
import hashlib
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
from bench_cacheaware import cpu_name  # noqa: E402

sys.path.insert(0, bl.REPO)

RATE = 16000


def make_clips(count, lo, hi, seed=32):
    rng = np.random.default_rng(seed)
    return [(0.1 * rng.standard_normal(int(rng.uniform(lo, hi) * RATE))).astype(np.float32) for _ in range(count)]


def worker(args):
    proto = bl.claim_stdout()
    lo, hi = (float(x) for x in args.seconds.split(","))
    clips = make_clips(args.clips, lo, hi)
    concat = np.concatenate(clips)
    models = {}  # isa -> Parakeet

    def load(isa):
        from parakeet_py.synthetic_model import ensure_synthetic_model

        p = bl.Parakeet(str(ensure_synthetic_model()), options={"isa": isa, "threads": args.threads})
        p.set_concurrency(1, args.threads)
        models[isa] = p
        run(isa)  # the warm-up
        return {"info": p.info()}

    def run(isa):
        p = models[isa]
        lengths = p.ffi.new("int[]", [c.size for c in clips])
        t0 = time.perf_counter()
        doc = p.native.string_result(p.lib.parakeet_capi_transcribe_pcm_batch_json_lang(  # the binding's one
            p.ctx, p.pcm(concat), lengths, len(clips), RATE, 0, p.ffi.NULL))
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "sha": hashlib.sha256(doc.encode()).hexdigest()}

    bl.serve(proto, {"load": load, "run": run, "quit": lambda: {}})


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True, help="a libparakeet.so that runs the clips one by one (main's)")
    ap.add_argument("--new", required=True, help="a libparakeet.so with batched batch calls (this branch's)")
    ap.add_argument("--clips", type=int, default=64)
    ap.add_argument("--seconds", default="2,5", help="the clips' shortest and longest length")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--isa", default="avx512,avx2", help="kernel levels, comma separated")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json", help="write the results here too")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)

    builds = {"old": os.path.abspath(args.old), "new": os.path.abspath(args.new)}
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--old", builds["old"], "--new", builds["new"],
            "--clips", str(args.clips), "--seconds", args.seconds, "--threads", str(args.threads)]
    workers = {name: bl.Worker(name, argv, env=dict(os.environ, PARAKEET_LIBRARY=lib))
               for name, lib in builds.items()}
    results = []
    try:
        for isa in args.isa.split(","):
            for w in workers.values():
                w.call("load", isa=isa)
            load_before = bl.loadavg()
            seconds = {name: [] for name in workers}
            shas = set()
            for r in range(args.rounds):
                for name in (("old", "new") if r % 2 == 0 else ("new", "old")):
                    got = workers[name].call("run", isa=isa)
                    seconds[name].append(got["seconds"])
                    shas.add(got["sha"])
            ratios = sorted(o / n for o, n in zip(seconds["old"], seconds["new"]))
            results.append({"isa": isa, "seconds": seconds, "ratio": bl.median(ratios),
                            "clips_per_s": {k: args.clips / bl.median(v) for k, v in seconds.items()},
                            "identical": len(shas) == 1, "load": [load_before, bl.loadavg()]})
    finally:
        for w in workers.values():
            w.close()

    print(f"{cpu_name()}; {args.clips} clips of {args.seconds.replace(',', '-')} s, 110M q8_0 synthetic, "
          f"1 backend x {args.threads} threads, {args.rounds} rounds")
    rows = [[r["isa"], f"{r['clips_per_s']['old']:.2f}", f"{r['clips_per_s']['new']:.2f}", f"{r['ratio']:.2f}x",
             "yes" if r["identical"] else "NO", f"{r['load'][0]:.1f} / {r['load'][1]:.1f}"] for r in results]
    print(bl.table(["isa", "one by one clips/s", "batched clips/s", "ratio", "same documents", "load before / after"],
                   rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"cpu": cpu_name(), "builds": builds, "clips": args.clips, "seconds": args.seconds,
                       "threads": args.threads, "results": results}, f, indent=1)
    return 0 if all(r["identical"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
