#!/usr/bin/env python3
"""Checks that two builds of libparakeet give the same bits: every committed NeMo fixture model
(f32, f16, q8_0) at every kernel level this CPU has, on every fixture clip, with every head the
model has, transcribed as JSON (text, tokens, times, confidences) by each library, then compared
byte for byte. A refactor that claims "nothing user-visible changes" runs this against its
base commit:

    git worktree add /tmp/base <base-commit>
    cmake -S /tmp/base -B /tmp/base/build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C /tmp/base/build parakeet
    python tools/compare_library_outputs.py --base /tmp/base/build/libparakeet/libparakeet.so \\
        --new build/libparakeet/libparakeet.so

Each library runs in its own process (two copies of the library in one process would share
symbols); the level is chosen with PARAKEET_CPU, which every build reads. Prints one line per
model file and level, then a summary; exits 1 if anything differs.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

DECODERS = {"default": 0, "ctc": 1, "transducer": 2}
WEIGHT_FILES = ("model.gguf", "model-f16.gguf", "model-q8_0.gguf")


def cases(data: Path) -> list[tuple[str, str]]:
    """(model file, clip) pairs: every fixture model file with every fixture clip."""
    models = sorted(str(d / f) for d in (data / "nemo").iterdir() for f in WEIGHT_FILES if (d / f).exists())
    clips = sorted(str(c) for c in (data / "audio").glob("*.wav"))
    return [(m, c) for m in models for c in clips]


def run_worker(model_paths: list[str], clips: list[str]) -> dict[str, str]:
    """In the worker process: the JSON (or the error) of every model x clip x decoder."""
    from parakeet_py._native import CDEF  # the binding's one declaration of the C ABI

    import cffi

    ffi = cffi.FFI()
    ffi.cdef(CDEF)
    lib = ffi.dlopen(os.environ["COMPARE_LIBRARY"])
    out: dict[str, str] = {}
    for model in model_paths:
        ctx = lib.parakeet_capi_load(model.encode())
        if ctx == ffi.NULL:
            out[model] = "load error: " + ffi.string(lib.parakeet_capi_load_error()).decode()
            continue
        try:
            for clip in clips:
                for name, number in DECODERS.items():
                    p = lib.parakeet_capi_transcribe_path_json(ctx, clip.encode(), number)
                    if p == ffi.NULL:
                        text = "error: " + ffi.string(lib.parakeet_capi_thread_last_error()).decode()
                    else:
                        text = ffi.string(p).decode()
                        lib.parakeet_capi_free_string(p)
                    out[f"{model} {clip} {name}"] = text
        finally:
            lib.parakeet_capi_free(ctx)
    return out


def outputs(library: str, level: str, model_paths: list[str], clips: list[str]) -> dict[str, str]:
    """Runs the worker for one library at one level."""
    env = dict(os.environ, COMPARE_LIBRARY=library, PARAKEET_CPU=level)
    request = json.dumps({"models": model_paths, "clips": clips})
    done = subprocess.run([sys.executable, __file__, "--worker"], input=request, env=env, capture_output=True,
                          text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"worker for {library} at {level} failed:\n{done.stderr}")
    return json.loads(done.stdout)


def unavailable(result: dict[str, str]) -> bool:
    """Every load failed: the level is above this CPU's (both libraries then refuse it)."""
    return all(v.startswith("load error") for v in result.values())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", help="libparakeet.so of the base commit")
    ap.add_argument("--new", help="libparakeet.so to check")
    ap.add_argument("--data", default=str(ROOT / "tests" / "data"), help="the fixture folder (tests/data)")
    ap.add_argument("--levels", default="scalar,avx2,avx512", help="kernel levels to compare (missing ones skip)")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        request = json.loads(sys.stdin.read())
        json.dump(run_worker(request["models"], request["clips"]), sys.stdout)
        return 0
    if not args.base or not args.new:
        ap.error("--base and --new are required")

    pairs = cases(Path(args.data))
    models = sorted({m for m, _ in pairs})
    clips = sorted({c for _, c in pairs})
    compared = differing = 0
    for level in args.levels.split(","):
        base = outputs(args.base, level, models, clips)
        new = outputs(args.new, level, models, clips)
        if unavailable(base) and unavailable(new):
            print(f"{level:7s} skipped: this CPU does not have it")
            continue
        for model in models:
            keys = sorted(k for k in base if k.startswith(model + " ") or k == model)
            diff = [k for k in keys if base.get(k) != new.get(k)]
            ok = sum(1 for k in keys if not base[k].startswith(("error", "load error")))
            compared += len(keys)
            differing += len(diff)
            rel = os.path.relpath(model, args.data)
            print(f"{level:7s} {rel:40s} {len(keys):3d} outputs ({ok} transcripts) "
                  f"{'identical' if not diff else f'{len(diff)} DIFFER'}")
            for k in diff[:3]:
                print(f"    {k}\n      base: {base[k][:160]}\n      new:  {new.get(k, '<missing>')[:160]}")
    print(f"\n{compared} outputs compared, {differing} differ")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main())
