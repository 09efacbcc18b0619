#!/usr/bin/env python3
"""Silero VAD cost per second of audio: libparakeet against onnxruntime on Silero's own ONNX,
interleaved (A B A B), one thread each, the same recording (the speech fixture with pauses,
repeated to --seconds). Prints a table and, with --json, one JSON document.

    PARAKEET_LIBRARY=build/libparakeet/libparakeet.so PYTHONPATH=.:tests/python \\
        .venv/bin/python bench/bench_vad.py --seconds 60 --rounds 5

Both sides compute every 32 ms chunk's probability; ours includes the C call and the JSON.
"""

import argparse
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "python")]

from parakeet_py.vad import Vad, default_model  # noqa: E402
from vad_helpers import onnx_probabilities, speech_with_pauses  # noqa: E402


def isa_level() -> str:
    flags = set(re.findall(r"\b(avx512\w*|avx2|fma)\b", Path("/proc/cpuinfo").read_text()))
    if {"avx512f", "avx512_vnni"} <= flags:
        return "AVX-512 (F/BW/VL/VNNI" + ("/BF16" if "avx512_bf16" in flags else "") + ")"
    return "AVX2/FMA" if "avx2" in flags else "below AVX2"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rate", type=int, choices=[16000, 8000], default=16000)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    clip = speech_with_pauses(ROOT / "tests" / "data" / "audio", args.rate)
    audio = np.tile(clip, int(np.ceil(args.seconds * args.rate / len(clip))))[: int(args.seconds * args.rate)]
    seconds = len(audio) / args.rate
    vad = Vad(default_model())
    runs = {"parakeet": lambda: vad.probabilities(audio, args.rate),
            "onnxruntime": lambda: onnx_probabilities(audio, args.rate)}
    for f in runs.values():
        f()  # warm-up (and the ONNX session's first build)
    times = {k: [] for k in runs}
    for _ in range(args.rounds):
        for name, f in runs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    med = {k: float(np.median(v)) for k, v in times.items()}
    doc = {"audio_seconds": seconds, "rate": args.rate, "rounds": args.rounds, "threads": 1,
           "cpu": platform.processor() or platform.machine(), "isa": isa_level(), "vad_kernel_level": vad.detect(audio[:512], args.rate)["isa"],
           "ms_per_audio_second": {k: 1000 * v / seconds for k, v in med.items()},
           "spread_ms_per_audio_second": {k: [1000 * min(v) / seconds, 1000 * max(v) / seconds]
                                          for k, v in times.items()},
           "speedup_vs_onnxruntime": med["onnxruntime"] / med["parakeet"]}
    if args.json:
        print(json.dumps(doc, indent=2))
        return
    print(f"{seconds:.0f} s of audio at {args.rate} Hz, {args.rounds} interleaved rounds, 1 thread, CPU {doc['isa']}, VAD kernels {doc['vad_kernel_level']}")
    for k in runs:
        lo, hi = doc["spread_ms_per_audio_second"][k]
        print(f"  {k:12s} {doc['ms_per_audio_second'][k]:7.3f} ms per audio second (min {lo:.3f}, max {hi:.3f})")
    print(f"  parakeet is {doc['speedup_vs_onnxruntime']:.2f}x onnxruntime")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    os.environ.setdefault("PARAKEET_THREADS", "1")  # one-shot VAD calls use the thread budget
    main()
