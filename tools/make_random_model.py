#!/usr/bin/env python3
"""A parakeet-tdt_ctc-110m sized NeMo model with random weights, for speed runs (never committed).

d_model 512, 17 layers, 8 heads, subsampling channels 256, pred/joint 640, vocab 1024, 80 mels,
hybrid TDT (durations 0..4) + CTC. The weights are random; the output layers are calibrated on
tests/data/audio/speech_16k.wav (build.calibrate_heads) with a large blank offset, so the
decoders behave like a real model's on speech: blank wins (TDT: with a chosen duration) and
the encoder dominates the run time. The CTC head's blank is shifted the same way.

    .nemo/bin/python tools/make_random_model.py                    # .cache/models/random_110m/model.nemo
    .nemo/bin/python tools/make_random_model.py --onnx             # + NeMo's ONNX export next to it
"""
import argparse
import dataclasses
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from nemo_fixtures import audio, build, capture, configs  # noqa: E402

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def prefer_duration(model, duration: int, durations: list) -> None:
    """Make every TDT step predict `duration` (the duration argmax is separate from the token's)."""
    import torch
    vocab = model.decoder.vocab_size
    with torch.no_grad():
        model.joint.joint_net[-1].bias[vocab + 1 + durations.index(duration)] += 100.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=os.path.join(REPO, ".cache", "models", "random_110m"))
    ap.add_argument("--seed", type=int, default=1234)
    ap.add_argument("--blank-offset", type=float, default=6.0,
                    help="blank logit offset in standard deviations of the calibrated logits (build.calibrate_heads)")
    ap.add_argument("--duration", type=int, default=1, choices=configs.TDT_DURATIONS,
                    help="TDT duration the biased model predicts with its blanks")
    ap.add_argument("--onnx", action="store_true", help="also run NeMo's model.export() (about 480 MB)")
    args = ap.parse_args()

    arch = dataclasses.replace(configs.ARCH_110M, blank_offset=args.blank_offset, ctc_blank_offset=args.blank_offset)
    os.makedirs(args.out, exist_ok=True)
    calib = capture.load_audio(os.path.join(REPO, "tests", "data", "audio", audio.CLIPS["speech"][0]))
    with tempfile.TemporaryDirectory() as tmp:
        tok = build.train_tokenizer(os.path.join(tmp, "tokenizer"), 1024, args.seed, 20000, rich=True)
        model = build.build_model(arch, tok, args.seed, calib_audio=calib)
        prefer_duration(model, args.duration, arch.durations)
        path = os.path.join(args.out, "model.nemo")
        build.save_model(model, path, args.seed)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{path}: {n_params:,} parameters, {os.path.getsize(path) / 1e6:.1f} MB")
    if args.onnx:
        model.export(os.path.join(args.out, "model.onnx"))
        for f in sorted(os.listdir(args.out)):
            print(os.path.join(args.out, f), f"{os.path.getsize(os.path.join(args.out, f)) / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
