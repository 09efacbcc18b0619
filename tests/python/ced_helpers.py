"""The CED sound-tagger fixtures (tests/data/ced, tools/fixtures/make_ced_fixtures.py)."""

import json
import wave
from pathlib import Path

import numpy as np

from convert_helpers import checkpoint_bytes, read_gguf

CED = Path(__file__).resolve().parents[1] / "data" / "ced"
MODEL = CED / "ced-test.gguf"
CONFIG_KEYS = ("embed_dim", "depth", "num_heads", "outputdim", "patch_size", "patch_stride", "target_length",
               "n_mels", "n_fft", "win_size", "hop_size", "mlp_ratio", "pooling", "qkv_bias")


def clip_path(name: str) -> Path:
    return CED / f"clip_{name}.wav"


def clip(name: str) -> np.ndarray:
    """A fixture clip's samples (16 kHz, 16-bit) as float32 in [-1, 1)."""
    with wave.open(str(clip_path(name))) as w:
        return np.frombuffer(w.readframes(w.getnframes()), "<i2").astype(np.float32) / 32768.0


def write_checkpoint(directory: Path) -> Path:
    """``directory`` made a mispeech/ced-* style folder (``pytorch_model.bin``, ``config.json``)
    holding the fixture model's weights and config."""
    fields, tensors = read_gguf(str(MODEL))
    state = {name: data.reshape(list(reversed(ne))) for name, (_, ne, data) in tensors.items()
             if name.startswith(("encoder.", "outputlayer."))}
    state["encoder.init_bn.num_batches_tracked"] = np.array(3, dtype=np.int64)  # 0-d: skipped
    (directory / "pytorch_model.bin").write_bytes(checkpoint_bytes(state))
    config = {k: fields[f"ced.{k}"][1] for k in CONFIG_KEYS}
    config["id2label"] = {str(i): label for i, label in enumerate(fields["ced.labels"][1])}
    (directory / "config.json").write_text(json.dumps(config))
    return directory


def reference_scores(name: str) -> np.ndarray:
    """The PyTorch reference's class probabilities of a clip."""
    return np.fromfile(CED / f"clip_{name}.scores.f32", "<f4")
