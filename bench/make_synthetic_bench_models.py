#!/usr/bin/env python3
"""The benchmark models of every weight type without NeMo: the random-weight synthetic models
(parakeet_py.synthetic_model, the 110M and 0.6B shapes) written as f32 and rewritten by
``parakeet-cli quantize``'s code into each type, under .cache/bench/<model>/model-<type>.gguf
(the names bench_e2e.py's ours-W and pcpp-W engines read). Existing files are kept.

    .venv/bin/python bench/make_synthetic_bench_models.py [--models 110m,600m] [--types q4_k,...]

Random weights with the synthetic model's joint bias emit almost no tokens, so these files
time the encoder (what quantisation changes), not the decoder; bench/make_bench_models.py
makes NeMo's own models when a .nemo venv is at hand.
"""
import argparse
import os
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, REPO)

from parakeet_py.convert import requantize_gguf  # noqa: E402
from parakeet_py.convert.quantize import OUT_TYPES  # noqa: E402
from parakeet_py.synthetic_model import ARCHS, write_synthetic_model  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--models", default="110m,600m")
    ap.add_argument("--types", default=",".join(t for t in OUT_TYPES if t != "f32"))
    args = ap.parse_args()
    for name in args.models.split(","):
        folder = os.path.join(REPO, ".cache", "bench", name)
        os.makedirs(folder, exist_ok=True)
        f32 = os.path.join(folder, "model-f32.gguf")
        if not os.path.exists(f32):
            t0 = time.perf_counter()
            write_synthetic_model(f32, ARCHS[name], "f32")
            print(f"{f32}: {os.path.getsize(f32) / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s")
        for t in args.types.split(","):
            out = os.path.join(folder, f"model-{t}.gguf")
            if os.path.exists(out):
                continue
            t0 = time.perf_counter()
            report = requantize_gguf(f32, out, t)
            print(f"{out}: {report.bytes_written / 1e6:.1f} MB in {time.perf_counter() - t0:.0f} s"
                  + (f" ({len(report.kept)} allowlisted weights kept)" if report.kept else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
