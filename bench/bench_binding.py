"""Python binding overhead: parakeet_py.Context.transcribe against the bare C call.

Both run in this process on the same loaded library and the same clip (16 kHz float32, so the
binding does no resampling): the C side is one cffi call of parakeet_capi_transcribe_pcm_json
(what the binding calls) with the result string decoded; the Python side is
Context.transcribe(array, sample_rate=16000), i.e. argument checks, the same call, JSON
parsing and the Transcript dataclasses. Calls alternate (C, Python, C, Python, ...) after a
warm-up; the table shows medians and the overhead in percent of the C call.

    python3 bench/bench_binding.py --model M.gguf --clip clip.wav [--threads 2] [--reps 30]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from parakeet_py import Context, load_audio  # noqa: E402
from parakeet_py import _native  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True)
    ap.add_argument("--clip", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    audio = np.ascontiguousarray(load_audio(args.clip, target_rate=16000), dtype=np.float32)
    ffi, lib = _native.load()
    with Context(args.model, threads=args.threads) as ctx:
        raw = ctx._ptr  # the parakeet_ctx* the binding holds
        buf = ffi.cast("const float*", ffi.from_buffer(audio))

        def c_call():
            s = lib.parakeet_capi_transcribe_pcm_json(raw, buf, len(audio), 16000, 0)
            out = ffi.string(s).decode()
            lib.parakeet_capi_free_string(s)
            return json.loads(out)["text"]

        def py_call():
            return ctx.transcribe(audio, sample_rate=16000).text

        assert c_call() == py_call(), "the binding and the C call disagree"
        for _ in range(3):
            c_call(), py_call()
        times = {"c": [], "python": []}
        for _ in range(args.reps):
            for name, fn in (("c", c_call), ("python", py_call)):
                t0 = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    overhead = (med["python"] - med["c"]) / med["c"] * 100.0
    result = {
        "model": args.model, "clip": args.clip, "audio_seconds": len(audio) / 16000, "threads": args.threads,
        "reps": args.reps, "loadavg": os.getloadavg()[0],
        "median_ms": {k: v * 1e3 for k, v in med.items()}, "overhead_percent": overhead,
    }
    if args.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{'path':<8} {'median ms':>10}")
        for k in ("c", "python"):
            print(f"{k:<8} {med[k] * 1e3:>10.2f}")
        print(f"binding overhead: {overhead:+.2f} % of the C call (load average {result['loadavg']:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
