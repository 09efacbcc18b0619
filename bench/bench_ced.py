#!/usr/bin/env python3
"""CED sound tagging speed: libparakeet (f32 and q8_0) against the same network in PyTorch and
in onnxruntime (f32, and int8: quantize_dynamic of the same export, the peer of our q8_0), on a random-weight CED of a published size (tiny 192/12/3, mini 256/12/4,
small 384/12/6, base 768/12/12; 527 classes, 10.12 s chunks), interleaved runs, medians, on the
same clip. PyTorch runs the hand-written reference of tools/fixtures/make_ced_fixtures.py
(torchaudio front end + the network) under no_grad; onnxruntime runs that network exported by
torch.onnx (the front end stays torchaudio's, timed with it; its int8 model quantises that
export's weights to int8 and its activations per call, as the published int8 ONNX models are
made); the library runs the GGUF our converter writes from the same weights.

Needs a venv with torch, torchaudio, onnxruntime, onnx and parakeet_py's dependencies (the
fixtures' .refvenv, docs/fixtures.md):
  PARAKEET_LIBRARY=build/libparakeet/libparakeet.so .refvenv/bin/python bench/bench_ced.py --size base --threads 2
"""
import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "fixtures"))
sys.path.insert(0, str(ROOT / "bench"))
import make_ced_fixtures as ref  # noqa: E402  (its import also keeps torchaudio's CUDA extension out)
import numpy as np  # noqa: E402
import torch  # noqa: E402
from engine_race import onnx_session, race, report  # noqa: E402

SIZES = {"tiny": (192, 12, 3), "mini": (256, 12, 4), "small": (384, 12, 6), "base": (768, 12, 12)}


class Reference(torch.nn.Module):
    """The reference network on a dB mel [64, T], as a module torch.onnx can trace. The weights
    are the module's parameters, so that the export holds them as initializers (constants
    would be left out by quantize_dynamic, which quantises initializers only)."""

    def __init__(self, sd, cfg):
        super().__init__()
        self.names, self.cfg = list(sd), cfg
        self.weights = torch.nn.ParameterList(torch.nn.Parameter(t, requires_grad=False) for t in sd.values())

    def forward(self, db):
        return ref.scores(dict(zip(self.names, self.weights)), db, self.cfg)


def write_ced(size, directory, out_types=("f32", "q8_0")):
    """A random-weight CED of a published size: (state dict, config, {out_type: GGUF path}), the
    files written by our converter into `directory`."""
    D, depth, heads = SIZES[size]
    cfg = dict(ref.CFG, embed_dim=D, depth=depth, num_heads=heads, outputdim=527, target_length=1012,
               id2label={str(i): f"class {i}" for i in range(527)})
    sd = ref.random_state_dict(torch.Generator().manual_seed(1), cfg)
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    torch.save(sd, directory / "pytorch_model.bin")
    (directory / "config.json").write_text(json.dumps(cfg))
    paths = {t: directory / f"ced-{size}-{t}.gguf" for t in out_types}
    for out_type, path in paths.items():
        ref.convert_ced(directory, path, out_type)
    return sd, cfg, paths


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size", choices=SIZES, default="base")
    ap.add_argument("--seconds", type=float, default=10.0, help="clip length (default 10: one chunk)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    os.environ["PARAKEET_THREADS"] = str(args.threads)  # read when the library first runs
    torch.set_num_threads(args.threads)
    from parakeet_py import SoundTagger

    pcm = ref.clip(int(args.seconds * 16000), 7).astype(np.float32) / 32768.0
    with tempfile.TemporaryDirectory() as tmp:
        sd, cfg, paths = write_ced(args.size, tmp)
        net = Reference(sd, cfg).eval()
        example = (ref.front_end(torch.from_numpy(pcm)),)
        ort_nets = {int8: onnx_session(net, example, ["db"], args.threads, int8=int8) for int8 in (False, True)}

        def run_torch():
            with torch.no_grad():
                return net(ref.front_end(torch.from_numpy(pcm))).numpy()

        def run_ort(int8=False):
            with torch.no_grad():
                return ort_nets[int8](ref.front_end(torch.from_numpy(pcm)).numpy())

        taggers = {out_type: SoundTagger(path) for out_type, path in paths.items()}
        want = run_torch()
        extra = {"size": args.size, "threads": args.threads,
                 "max_abs_diff_f32": float(np.abs(taggers["f32"].scores(pcm) - want).max()),
                 "max_abs_diff_q8_0": float(np.abs(taggers["q8_0"].scores(pcm) - want).max()),
                 "max_abs_diff_onnxruntime": float(np.abs(run_ort() - want).max()),
                 "max_abs_diff_onnxruntime_int8": float(np.abs(run_ort(int8=True) - want).max())}
        engines = {f"ours_{t}": (lambda tagger=tagger: tagger.scores(pcm)) for t, tagger in taggers.items()}
        peers = {"pytorch": run_torch, "onnxruntime": run_ort, "onnxruntime_int8": lambda: run_ort(int8=True)}
        times, others = race(dict(engines, **peers), args.rounds)
        for tagger in taggers.values():
            tagger.close()
    report(times, others, args.seconds, list(engines), list(peers), extra, args.json)


if __name__ == "__main__":
    main()
