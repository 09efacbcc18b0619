#!/usr/bin/env python3
"""Long audio: RTFx and peak memory against duration, per attention mode.

    python3 bench/bench_long.py                                  # 110m q8_0+f32, 1..180 min
    python3 bench/bench_long.py --minutes 1,10 --types q8_0 --modes auto,full --json out.json

Needs bench/make_bench_models.py's outputs (.cache/bench/<model>/model-<type>.gguf and the
clips) and a Release libparakeet (build-bench/ or $PARAKEET_LIBRARY).

The long clips are the bench clips (.cache/bench/clips/clip_*.wav) concatenated in a fixed
order until the duration is reached, written once as 16-bit WAVs next to them. Every
(type, mode, duration) runs in a fresh worker process, so its peak RSS (VmHWM) is its own;
the worker reports RSS after loading the model, the bytes of the float samples it holds, and
the peak. Modes are set through PARAKEET_ATT_CONTEXT, which the library reads at load:
auto (unset), full (0), local (128 = local [128, 128]).

One untimed warm-up call on 10 s of audio, then `--reps` timed calls (median) for clips up to
--repeat-max-minutes, a single timed call above (an hour of audio takes minutes). Full
attention costs O(T^2); --full-max-minutes skips longer full runs (reported as skipped).
"""
import argparse
import json
import os
import subprocess
import sys
import time
import wave

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402

MODE_ENV = {"auto": None, "full": "0", "local": "128"}
SOURCE_CLIPS = ("clip_10s", "clip_23s", "clip_7s", "clip_30s")


def long_clip(minutes):
    """Path of a 16 kHz 16-bit WAV of exactly `minutes` minutes (made on first use)."""
    clips = os.path.join(bl.CACHE, "clips")
    path = os.path.join(clips, f"long_{minutes:g}min.wav")
    if os.path.exists(path):
        return path
    n = int(round(minutes * 60 * 16000))
    parts = []
    for name in SOURCE_CLIPS:
        with wave.open(os.path.join(clips, name + ".wav"), "rb") as w:
            parts.append(np.frombuffer(w.readframes(w.getnframes()), dtype="<i2"))
    cycle = np.concatenate(parts)
    data = np.resize(cycle, n)  # repeats the cycle, cut to n samples
    tmp = path + ".tmp"
    with wave.open(tmp, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(data.astype("<i2").tobytes())
    os.replace(tmp, path)
    return path


def worker(args):
    proto = bl.claim_stdout()
    pk = bl.Parakeet(args.gguf, args.lib)
    pk.set_threads(args.threads)
    after_load = bl.memory()["VmRSS"]
    audio = bl.read_wav(args.clip)
    pk.transcribe(audio[:160000])  # warm-up: thread team, arena, tables
    times = []
    for _ in range(args.reps):
        t0 = time.perf_counter()
        j = pk.transcribe_json(audio)
        times.append(time.perf_counter() - t0)
    mem = bl.memory()
    out = {"seconds": bl.median(times), "times": times, "rss_after_load": after_load,
           "samples_bytes": audio.nbytes, "peak_rss": mem["VmHWM"], "tokens": len(j["tokens"]),
           "attention": j.get("attention"), "info_attention": pk.info().get("attention")}
    proto.write(json.dumps(out) + "\n")


def run_one(args, wtype, mode, minutes):
    gguf = os.path.join(bl.CACHE, args.model, f"model-{wtype}.gguf")
    reps = args.reps if minutes <= args.repeat_max_minutes else 1
    env = dict(os.environ)
    env.pop("PARAKEET_ATT_CONTEXT", None)
    if MODE_ENV[mode] is not None:
        env["PARAKEET_ATT_CONTEXT"] = MODE_ENV[mode]
    argv = [sys.executable, os.path.abspath(__file__), "--worker", "--gguf", gguf, "--clip", long_clip(minutes),
            "--threads", str(args.threads), "--reps", str(reps)]
    if args.lib:
        argv += ["--lib", args.lib]
    others = bl.OthersCpu()
    others.start()
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, text=True, check=True)
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r.update(type=wtype, mode=mode, minutes=minutes, reps=reps, others_cpu=others.stop(),
             rtfx=minutes * 60 / r["seconds"])
    return r


def table(rows):
    head = ("type", "mode", "min", "ran", "reps", "seconds", "RTFx", "RSS load MB", "samples MB",
            "peak RSS MB", "peak - load - samples MB", "others CPU")
    lines = [" | ".join(head), " | ".join("---" for _ in head)]
    for r in rows:
        if r.get("skipped"):
            lines.append(f"{r['type']} | {r['mode']} | {r['minutes']:g} | skipped: {r['skipped']}" + " |" * 8)
            continue
        att = r.get("attention") or {}
        ran = att.get("mode", "?") + (f"[{att['left']},{att['right']}]" if att.get("mode") == "local" else "")
        extra = r["peak_rss"] - r["rss_after_load"] - r["samples_bytes"]
        lines.append(" | ".join([
            r["type"], r["mode"], f"{r['minutes']:g}", ran, str(r["reps"]), f"{r['seconds']:.1f}",
            f"{r['rtfx']:.1f}", f"{bl.mb(r['rss_after_load']):.0f}", f"{bl.mb(r['samples_bytes']):.0f}",
            f"{bl.mb(r['peak_rss']):.0f}", f"{bl.mb(extra):.0f}", f"{r['others_cpu']:.2f}"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="110m")
    ap.add_argument("--types", default="q8_0,f32")
    ap.add_argument("--modes", default="auto,full,local")
    ap.add_argument("--minutes", default="1,10,30,60,180")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--repeat-max-minutes", type=float, default=1.0)
    ap.add_argument("--full-max-minutes", type=float, default=10.0)
    ap.add_argument("--lib", default=None)
    ap.add_argument("--json", default=None)
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--gguf", help=argparse.SUPPRESS)
    ap.add_argument("--clip", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args)
    rows = []
    for minutes in [float(m) for m in args.minutes.split(",")]:
        for wtype in args.types.split(","):
            for mode in args.modes.split(","):
                if mode == "full" and minutes > args.full_max_minutes:
                    rows.append({"type": wtype, "mode": mode, "minutes": minutes,
                                 "skipped": f"O(T^2), above --full-max-minutes {args.full_max_minutes:g}"})
                    continue
                r = run_one(args, wtype, mode, minutes)
                rows.append(r)
                print(f"{wtype} {mode} {minutes:g} min: {r['seconds']:.1f} s, RTFx {r['rtfx']:.1f}, "
                      f"peak RSS {bl.mb(r['peak_rss']):.0f} MB", file=sys.stderr, flush=True)
    print(table(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"threads": args.threads, "model": args.model, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
