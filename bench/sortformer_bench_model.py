"""A streaming Sortformer of the published size (diar_streaming_sortformer_4spk-v2: FastConformer
17 x 512 with 8 heads, subsampling channels 256, encoder_proj 512 -> 192, transformer 18 x 192
with 8 heads and inner 768, 4 speakers) with random weights, built without NeMo: the test
fixture's streaming model (tests/data/nemo/sortformer_stream/model.nemo, NeMo's own layout and
config) is rewritten at that size, tensor for tensor, and converted with our converter. For
speed benches (bench_scene.py) on machines without the NeMo venv; bench_diarize_stream.py builds
the same shape with NeMo's class. Its output heads' biases make speaker 0 speak alone.

Needs torch (to write the checkpoint) and parakeet_py's converter.
"""
import io
import re
import subprocess
import sys
import tarfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
FIXTURE = ROOT / "tests" / "data" / "nemo" / "sortformer_stream" / "model.nemo"
D, HEADS, FF, SUB, KERNEL, LAYERS = 512, 8, 2048, 256, 9, 17
TF, TF_INNER, TF_HEADS, TF_LAYERS, SPEAKERS = 192, 768, 8, 18, 4


def _shapes(fixture_keys):
    """name -> shape of the published model, from the fixture's names (layer 0 stands for every
    layer)."""
    # Matched by the first part the name contains; a bias is its matrix's first dimension.
    enc = {"norm_feed_forward1": (D,), "norm_conv": (D,), "norm_self_att": (D,), "norm_feed_forward2": (D,),
           "norm_out": (D,), "linear1": (FF, D), "linear2": (D, FF), "pointwise_conv1": (2 * D, D, 1),
           "depthwise_conv": (D, 1, KERNEL), "batch_norm": (D,), "pointwise_conv2": (D, D, 1),
           "pos_bias": (HEADS, D // HEADS), "linear_": (D, D), "num_batches_tracked": ()}
    tf = {"layer_norm": (TF,), "dense_in": (TF_INNER, TF), "dense_out": (TF, TF_INNER), "_net": (TF, TF),
          "out_projection": (TF, TF)}
    fixed = {"encoder.pre_encode.out.weight": (D, SUB * 10), "encoder.pre_encode.out.bias": (D,),
             "sortformer_modules.encoder_proj.weight": (TF, D), "sortformer_modules.encoder_proj.bias": (TF,),
             "sortformer_modules.hidden_to_spks.weight": (SPEAKERS, 2 * TF),
             "sortformer_modules.hidden_to_spks.bias": (SPEAKERS,),
             "sortformer_modules.first_hidden_to_hidden.weight": (TF, TF),
             "sortformer_modules.first_hidden_to_hidden.bias": (TF,),
             "sortformer_modules.single_hidden_to_spks.weight": (SPEAKERS, TF),
             "sortformer_modules.single_hidden_to_spks.bias": (SPEAKERS,)}
    out = dict(fixed)
    for key in fixture_keys:
        if key in fixed or key.startswith("preprocessor.") or ".layers." in key and ".layers.0." not in key:
            continue
        if key.startswith("encoder.pre_encode.conv."):
            depthwise = key.endswith(".weight") and key.split(".")[3] in ("0", "2", "5")
            out[key] = (SUB, 1, 3, 3) if depthwise else (SUB, SUB, 1, 1) if key.endswith(".weight") else (SUB,)
            continue
        table, count = (enc, LAYERS) if key.startswith("encoder.") else (tf, TF_LAYERS)
        shape = next(s for part, s in table.items() if part in key)
        if key.endswith(".bias"):
            shape = shape[:1]
        for i in range(count):
            out[key.replace(".layers.0.", f".layers.{i}.")] = shape
    return out


def _config(text: str) -> str:
    """The fixture's model_config.yaml at the published size (its streaming settings kept)."""
    for key, value in {"fc_d_model": D, "tf_d_model": TF, "n_layers": LAYERS, "d_model": D, "n_heads": HEADS,
                       "subsampling_conv_channels": SUB, "ff_expansion_factor": FF // D, "num_layers": TF_LAYERS,
                       "hidden_size": TF, "inner_size": TF_INNER, "num_attention_heads": TF_HEADS}.items():
        text, n = re.subn(rf"^(\s*{key}:) .*$", rf"\g<1> {value}", text, flags=re.M)
        if n == 0:
            raise RuntimeError(f"the fixture's config has no {key}")
    return text


def build(directory: Path) -> Path:
    """directory/model.gguf (f32), built on first use."""
    import torch

    gguf = directory / "model.gguf"
    if gguf.exists():
        return gguf
    directory.mkdir(parents=True, exist_ok=True)
    with tarfile.open(FIXTURE) as tar:
        members = {Path(m.name).name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    fixture = torch.load(io.BytesIO(members["model_weights.ckpt"]), map_location="cpu")
    rng = np.random.default_rng(35)
    sd = {k: v for k, v in fixture.items() if k.startswith("preprocessor.")}  # window and filterbank
    for name, shape in _shapes(fixture).items():
        if name.endswith("num_batches_tracked"):
            sd[name] = torch.tensor(1)
        elif name.endswith("running_var"):
            sd[name] = torch.from_numpy(rng.uniform(0.5, 2.0, shape).astype(np.float32))
        elif len(shape) >= 2 and "pos_bias" not in name:  # a matrix: unit-variance outputs
            fan_in = int(np.prod(shape[1:]))
            sd[name] = torch.from_numpy((rng.standard_normal(shape) / np.sqrt(fan_in)).astype(np.float32))
        else:
            base = 1.0 if re.search(r"(norm\w*|layer_norm_\d|batch_norm)\.weight$", name) else 0.0
            sd[name] = torch.from_numpy((base + 0.1 * rng.standard_normal(shape)).astype(np.float32))
    # Speaker 0 speaks alone throughout (random weights would keep every speaker on at once):
    # clean voice for the scene stream's naming, which then embeds as often as its rules allow.
    for head in ("hidden_to_spks", "single_hidden_to_spks"):
        sd[f"sortformer_modules.{head}.bias"] = torch.tensor([8.0] + [-8.0] * (SPEAKERS - 1))
    ckpt = io.BytesIO()
    torch.save(sd, ckpt)
    nemo = directory / "model.nemo"
    with tarfile.open(nemo, "w") as tar:
        for name, data in (("model_config.yaml", _config(members["model_config.yaml"].decode()).encode()),
                           ("model_weights.ckpt", ckpt.getvalue())):
            info = tarfile.TarInfo(f"./{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    subprocess.run([sys.executable, "-m", "parakeet_py.convert", str(nemo), str(gguf), "--type", "f32"], check=True,
                   cwd=ROOT, stdout=subprocess.DEVNULL)
    nemo.unlink()  # half a gigabyte, not needed again
    return gguf
