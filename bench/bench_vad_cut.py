#!/usr/bin/env python3
"""VAD-cut against uncut transcription of a long recording that is about 40 % silence.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:tests/python \\
        .venv/bin/python bench/bench_vad_cut.py --minutes 30 --rounds 2

The recording: the speech fixture in sentence-sized pieces with pauses of 0.3 to 3 s between
them (silence with faint noise), tiled to --minutes. The ASR model is the random-weight 110M
q8_0 of parakeet_py.synthetic_model (made once into the cache; its joint favours blank, so the
encoder dominates as with a real model). Uncut and VAD-cut runs alternate (A B A B); the cut
time includes the VAD itself, which is also timed alone. Each run's process CPU time (all
threads) is reported with its wall time: on a machine shared with other jobs the wall times
move with the load, the CPU times much less. Prints a table, or --json.
"""

import argparse
import json
import re
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT)]

from parakeet_py import Context  # noqa: E402
from parakeet_py.synthetic_model import ARCH_110M, ensure_synthetic_model  # noqa: E402
from parakeet_py.vad import Vad, default_model  # noqa: E402


def recording(minutes: float, silence_share: float = 0.4) -> np.ndarray:
    speech, sr = sf.read(str(ROOT / "tests" / "data" / "audio" / "speech_16k.wav"), dtype="float32")
    rng = np.random.default_rng(40)
    pieces = np.array_split(speech, 4)
    speech_len = sum(len(p) for p in pieces)
    # Pause lengths scaled so that silence is `silence_share` of the whole.
    raw = rng.uniform(0.3, 3.0, len(pieces))
    gaps = raw / raw.sum() * speech_len * silence_share / (1 - silence_share)
    block = np.concatenate([np.concatenate([p, rng.normal(0, 1e-3, int(g)).astype(np.float32)])
                            for p, g in zip(pieces, gaps)])
    n = int(minutes * 60 * sr)
    return np.ascontiguousarray(np.tile(block, n // len(block) + 1)[:n])


def isa_level() -> str:
    flags = set(re.findall(r"\b(avx512\w*|avx2)\b", Path("/proc/cpuinfo").read_text()))
    return "avx512" if {"avx512f", "avx512_vnni"} <= flags else ("avx2" if "avx2" in flags else "scalar")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=30.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    audio = recording(args.minutes)
    seconds = len(audio) / 16000
    model = ensure_synthetic_model(ARCH_110M, "q8_0")
    with Context(model) as ctx, Vad(default_model()) as vad:
        t0, c0 = time.perf_counter(), time.process_time()
        speech = vad.segments(audio, 16000)
        vad_s, vad_cpu = time.perf_counter() - t0, time.process_time() - c0
        speech_share = sum(s["end"] - s["start"] for s in speech) / seconds
        ctx.transcribe(audio[:160000], sample_rate=16000)  # warm-up
        times = {"uncut": [], "vad-cut": []}
        cpu = {"uncut": [], "vad-cut": []}
        for _ in range(args.rounds):
            for name in times:
                t0, c0 = time.perf_counter(), time.process_time()
                if name == "uncut":
                    ctx.transcribe(audio, sample_rate=16000)
                else:
                    segments = len(ctx.transcribe(audio, sample_rate=16000, vad=vad).segments)
                times[name].append(time.perf_counter() - t0)
                cpu[name].append(time.process_time() - c0)
        isa = ctx.info["isa"]
    med = {k: float(np.median(v)) for k, v in times.items()}
    med_cpu = {k: float(np.median(v)) for k, v in cpu.items()}
    doc = {"audio_seconds": seconds, "speech_share": speech_share, "segments": segments,
           "vad_seconds": vad_s, "vad_cpu_seconds": vad_cpu, "seconds": med, "all_seconds": times,
           "cpu_seconds": med_cpu, "all_cpu_seconds": cpu, "ratio_cut_over_uncut": med["vad-cut"] / med["uncut"],
           "cpu_ratio_cut_over_uncut": med_cpu["vad-cut"] / med_cpu["uncut"],
           "load_average": [float(x) for x in Path("/proc/loadavg").read_text().split()[:3]],
           "model": "synthetic 110M q8_0", "asr_isa": isa, "cpu_isa": isa_level(), "rounds": args.rounds}
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    print(f"{seconds / 60:.0f} min, speech {100 * speech_share:.0f} % by the VAD, {segments} segments in chunks of <= 30 s of speech; "
          f"110M q8_0 at {isa}; {args.rounds} interleaved rounds")
    for k, v in med.items():
        print(f"  {k:8s} {v:7.2f} s  RTFx {seconds / v:6.1f}   (runs: {', '.join(f'{x:.2f}' for x in times[k])});"
              f" CPU {med_cpu[k]:.2f} s")
    print(f"  VAD alone {vad_s:.2f} s (CPU {vad_cpu:.2f} s); cut / uncut = {doc['ratio_cut_over_uncut']:.2f} "
          f"(CPU time {doc['cpu_ratio_cut_over_uncut']:.2f}); load average {doc['load_average']}")


if __name__ == "__main__":
    main()
