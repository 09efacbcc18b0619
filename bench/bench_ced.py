#!/usr/bin/env python3
"""CED sound tagging speed: libparakeet against PyTorch on a random-weight CED of a published
size (tiny 192/12/3, mini 256/12/4, small 384/12/6, base 768/12/12; 527 classes, 10.12 s chunks),
interleaved runs, best of N, on the same clip. PyTorch runs the hand-written reference of
tools/fixtures/make_ced_fixtures.py (torchaudio front end + the network) under no_grad; the
library runs the GGUF our converter writes from the same weights (f32 and q8_0).

Needs a venv with torch, torchaudio and parakeet_py's dependencies (tools/fixtures' .refvenv):
  PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_ced.py --size tiny --threads 2
"""
import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "fixtures"))
import make_ced_fixtures as ref  # noqa: E402  (its import also keeps torchaudio's CUDA extension out)
import numpy as np  # noqa: E402
import torch  # noqa: E402

SIZES = {"tiny": (192, 12, 3), "mini": (256, 12, 4), "small": (384, 12, 6), "base": (768, 12, 12)}


def timed(fn):
    """(wall seconds, CPU seconds of the whole process): on a busy machine the CPU time is the
    steadier measure of what a run costs."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=SIZES, default="tiny")
    ap.add_argument("--seconds", type=float, default=10.0, help="clip length (default 10: one chunk)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library first runs
    torch.set_num_threads(args.threads)
    from parakeet_py import SoundTagger

    D, depth, heads = SIZES[args.size]
    cfg = dict(ref.CFG, embed_dim=D, depth=depth, num_heads=heads, outputdim=527, target_length=1012,
               id2label={str(i): f"class {i}" for i in range(527)})
    sd = ref.random_state_dict(torch.Generator().manual_seed(1), cfg)
    pcm16 = ref.clip(int(args.seconds * 16000), 7)
    pcm = pcm16.astype(np.float32) / 32768.0
    results = {"size": args.size, "seconds": args.seconds, "threads": args.threads}
    with tempfile.TemporaryDirectory() as tmp:
        torch.save(sd, Path(tmp) / "pytorch_model.bin")
        (Path(tmp) / "config.json").write_text(json.dumps(cfg))
        taggers = {}
        for out_type in ("f32", "q8_0"):
            ref.convert_ced(tmp, Path(tmp) / f"ced-{out_type}.gguf", out_type)
            taggers[out_type] = SoundTagger(Path(tmp) / f"ced-{out_type}.gguf")

        def run_torch():
            with torch.no_grad():
                return ref.scores(sd, ref.front_end(torch.from_numpy(pcm)), cfg)

        want = run_torch().numpy()
        results["max_abs_diff_f32"] = float(np.abs(taggers["f32"].scores(pcm) - want).max())
        times = {"torch": [], "f32": [], "q8_0": []}
        for _ in range(args.repeats):  # interleaved, so load changes hit every engine alike
            times["torch"].append(timed(run_torch))
            for out_type, tagger in taggers.items():
                times[out_type].append(timed(lambda: tagger.scores(pcm)))
        for tagger in taggers.values():
            tagger.close()
    best = {engine: (min(t[0] for t in ts), min(t[1] for t in ts)) for engine, ts in times.items()}
    for engine, (wall, cpu) in best.items():
        results[f"{engine}_wall_ms"] = round(1000 * wall, 1)
        results[f"{engine}_cpu_ms"] = round(1000 * cpu, 1)
        results[f"{engine}_x_realtime"] = round(args.seconds / wall, 1)
    for out_type in ("f32", "q8_0"):
        results[f"speedup_wall_{out_type}"] = round(best["torch"][0] / best[out_type][0], 2)
        results[f"speedup_cpu_{out_type}"] = round(best["torch"][1] / best[out_type][1], 2)
    if args.json:
        print(json.dumps(results))
        return
    for key, value in results.items():
        print(f"{key:>20}: {value}")


if __name__ == "__main__":
    main()
