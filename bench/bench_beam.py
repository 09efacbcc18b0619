#!/usr/bin/env python3
"""Beam search cost: RTFx of NeMo's transducer beam search (beam 1, 2, 4, 8) against greedy
decoding on one clip, end to end (front end, encoder, decoder) through parakeet_py.

    PARAKEET_LIBRARY=build-beam/libparakeet/libparakeet.so PYTHONPATH=. \\
        .venv/bin/python bench/bench_beam.py [--model .cache/bench/110m/model-f32.gguf] \\
        [--clip .cache/bench/clips/clip_10s.wav] [--threads 2] [--reps 5] [--json out.json]

The clip is decoded once before timing; every configuration gets one untimed warm-up; then each
round runs all configurations one after another, the order rotating every round, so that load
changes on a shared machine hit them alike. Reported: the median seconds per configuration,
RTFx = audio seconds / median, the ratio to greedy, the best hypothesis' token count, and the
decoder's own time (configuration minus greedy: the front end and the encoder are the same).
A benchmark's printout, not a test.
"""
import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from parakeet_py import Context, load_audio  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = [("greedy", None), ("beam 1", 1), ("beam 2", 2), ("beam 4", 4), ("beam 8", 8)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default=os.path.join(REPO, ".cache", "bench", "110m", "model-f32.gguf"))
    ap.add_argument("--clip", default=os.path.join(REPO, ".cache", "bench", "clips", "clip_10s.wav"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--json")
    args = ap.parse_args()

    with Context(args.model, threads=args.threads) as ctx:
        audio = load_audio(args.clip, target_rate=ctx.sample_rate)
        seconds = audio.size / ctx.sample_rate
        tokens = {}
        for name, beam in CONFIGS:  # warm-up
            tokens[name] = len(ctx.transcribe(audio, sample_rate=ctx.sample_rate, beam=beam).tokens)
        times = {name: [] for name, _ in CONFIGS}
        for r in range(args.reps):
            order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
            for name, beam in order:
                t0 = time.perf_counter()
                ctx.transcribe(audio, sample_rate=ctx.sample_rate, beam=beam, timestamps=False)
                times[name].append(time.perf_counter() - t0)
    med = {name: statistics.median(ts) for name, ts in times.items()}
    rows = []
    for name, _ in CONFIGS:
        rows.append({"config": name, "median_s": round(med[name], 4), "rtfx": round(seconds / med[name], 1),
                     "vs_greedy": round(med["greedy"] / med[name], 3),
                     "decoder_extra_ms": round((med[name] - med["greedy"]) * 1000, 1), "tokens": tokens[name]})
    print(f"{os.path.basename(args.model)}, {os.path.basename(args.clip)} ({seconds:.2f} s), {args.threads} threads, "
          f"{args.reps} interleaved rounds, load {os.getloadavg()[0]:.1f}")
    print(f"{'config':8} {'median s':>9} {'RTFx':>7} {'x greedy':>9} {'extra ms':>9} {'tokens':>7}")
    for row in rows:
        print(f"{row['config']:8} {row['median_s']:9.4f} {row['rtfx']:7.1f} {row['vs_greedy']:9.3f} "
              f"{row['decoder_extra_ms']:9.1f} {row['tokens']:7d}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"model": args.model, "clip": args.clip, "audio_s": seconds, "threads": args.threads,
                       "reps": args.reps, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
