#!/usr/bin/env python3
"""NNCF post-training int8 quantisation of NeMo's ONNX encoder, for bench_e2e.py's ov-int8 engine.

    .nemo/bin/python bench/make_ov_int8.py --model-dir .cache/bench/110m [--force]

Reads <model>/onnx/encoder-model.onnx, writes the quantised OpenVINO IR
<model>/openvino/encoder-model.int8.{xml,bin} and encoder-model.int8.json (how it was made:
versions, calibration clips and windows, NNCF settings, seconds). An existing IR is kept
unless --force; bench_e2e.py runs this when an ov-int8 engine needs the IR and it is missing.

Calibration set: 10 s windows (5 s apart; a shorter clip whole) of the bench's speech clips
clip_7s, clip_23s and clip_30s, through the same numpy log-mel the engines feed the encoder.
clip_10s, the clip bench_e2e.py times by default, is left out. nncf.quantize with
model_type TRANSFORMER (NNCF's setting for models with attention: SmoothQuant first, and its
transformer patterns of operations left in float) and its defaults otherwise (preset
PERFORMANCE: symmetric int8 weights and activations; fast bias correction).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402
from onnx_tdt import NumpyMel, onnx_path  # noqa: E402
from openvino_engine import int8_encoder_path, int8_recipe_path  # noqa: E402

CALIBRATION_CLIPS = ("clip_7s", "clip_23s", "clip_30s")
WINDOW_S, HOP_S = 10, 5


def calibration_windows(clips_dir):
    """(clip, start second, samples) of every calibration window."""
    out = []
    for clip in CALIBRATION_CLIPS:
        audio = bl.read_wav(os.path.join(clips_dir, clip + ".wav"))
        win, hop = WINDOW_S * 16000, HOP_S * 16000
        for start in range(0, max(1, len(audio) - win + 1), hop):
            out.append((clip, start // 16000, audio[start:start + win]))
    return out


def make(model_dir, clips_dir):
    import nncf
    import openvino as ov
    t0 = time.perf_counter()
    mel = NumpyMel(os.path.join(model_dir, "frontend.npz"))
    windows = calibration_windows(clips_dir)
    model = ov.Core().read_model(onnx_path(model_dir, "encoder"))
    quantized = nncf.quantize(model, nncf.Dataset([mel.encoder_inputs(a) for _, _, a in windows]),
                              model_type=nncf.ModelType.TRANSFORMER, subset_size=len(windows))
    out = int8_encoder_path(model_dir)
    os.makedirs(os.path.dirname(out), exist_ok=True)
    # Not compressed to f16: the float parts stay f32 as in the source graph, as for ov-f32.
    ov.save_model(quantized, out, compress_to_fp16=False)
    recipe = {"source": onnx_path(model_dir, "encoder"), "openvino": ov.get_version(), "nncf": nncf.__version__,
              "method": "nncf.quantize (post-training)", "model_type": "TRANSFORMER", "preset": "default (PERFORMANCE)",
              "subset_size": len(windows),
              "calibration": [f"{clip} {s}-{s + len(a) / 16000:.1f} s" for clip, s, a in windows],
              "seconds": round(time.perf_counter() - t0, 1)}
    with open(int8_recipe_path(model_dir), "w") as f:
        json.dump(recipe, f, indent=2)
    print(f"{out}: {len(windows)} calibration windows, {recipe['seconds']} s", flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model-dir", default=os.path.join(bl.CACHE, "110m"))
    ap.add_argument("--clips-dir", default=os.path.join(bl.CACHE, "clips"))
    ap.add_argument("--force", action="store_true", help="remake an existing IR")
    args = ap.parse_args()
    if not os.path.exists(onnx_path(args.model_dir, "encoder")):
        raise SystemExit(f"{onnx_path(args.model_dir, 'encoder')} is missing: run bench/make_bench_models.py first")
    if os.path.exists(int8_encoder_path(args.model_dir)) and not args.force:
        print(f"{int8_encoder_path(args.model_dir)} exists (--force remakes it)")
        return 0
    make(args.model_dir, args.clips_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
