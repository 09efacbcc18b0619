"""Converting real NeMo-saved models: every state_dict tensor and key arrives intact.

Runs on each ``tests/data/nemo/<name>/model.nemo`` (and on the ``model.nemo`` files under
the folders listed in ``PARAKEET_CONVERT_NEMO_DIRS``, colon-separated, for checking large
published models locally). The reference tensors come from ``state_dict.npz`` beside the
model when present, otherwise from ``torch.load`` in the NeMo venv (``.nemo/bin/python``);
without either, the tensor values are not checked.
"""

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest
import yaml

import convert_helpers as F
from parakeet_py.convert import convert_nemo
from parakeet_py.convert.nemo_archive import NemoArchive
from parakeet_py.convert.sortformer_config import is_sortformer
from parakeet_py.convert.quantize import encode_q8_0, storage_type

from data_helpers import ARCHS, NEMO_DIR, ROOT
TORCH_PYTHON = ROOT / ".nemo" / "bin" / "python"


def _models():
    roots = [NEMO_DIR]
    roots += [Path(p) for p in os.environ.get("PARAKEET_CONVERT_NEMO_DIRS", "").split(":") if p]
    found = []
    for root in roots:
        if root.is_dir():
            found += sorted(root.glob("*/model.nemo")) + sorted(root.glob("*.nemo"))
    # ASR models only: a Sortformer's conversion has its own schema (test_diarize.py reconverts
    # the fixtures, and their NeMo parity tests check the values).
    return [p for p in found if not is_sortformer(model_config(p))]


_DUMP = """
import sys, numpy as np, torch, tarfile, io
with tarfile.open(sys.argv[1]) as t:
    m = next(m for m in t.getmembers() if m.name.endswith("model_weights.ckpt"))
    sd = torch.load(io.BytesIO(t.extractfile(m).read()), map_location="cpu", weights_only=True)
np.savez(sys.argv[2], **{k: (v.float() if v.dtype == torch.bfloat16 else v).numpy() for k, v in sd.items()})
"""


def reference_state_dict(nemo: Path, tmp_path: Path):
    npz = nemo.parent / "state_dict.npz"
    if nemo.name == "model.nemo" and npz.exists():
        return dict(np.load(npz))
    if TORCH_PYTHON.exists():
        out = tmp_path / "sd.npz"
        run = subprocess.run([str(TORCH_PYTHON), "-c", _DUMP, str(nemo), str(out)], capture_output=True, text=True,
                             env=dict(os.environ, OMP_NUM_THREADS="1"))
        if run.returncode != 0:
            pytest.skip(f"torch.load in {TORCH_PYTHON} failed: {run.stderr.strip().splitlines()[-1:]}")
        return dict(np.load(out))
    return None


def model_config(nemo: Path) -> dict:
    with NemoArchive(nemo) as ar:
        cfg = yaml.safe_load(ar.read_bytes(ar.require("model_config.yaml")))
    return cfg.get("model", cfg) if "encoder" not in cfg else cfg


MODELS = _models()
pytestmark = pytest.mark.skipif(not MODELS, reason="no NeMo-saved models in tests/data/nemo")


@pytest.mark.parametrize("nemo", MODELS, ids=[str(p.parent.name if p.name == "model.nemo" else p.stem) for p in MODELS])
def test_real_model_converts_with_every_tensor_and_key(nemo, tmp_path):
    report = convert_nemo(nemo, tmp_path / "f32.gguf", "f32")
    fields, tensors = F.read_gguf(tmp_path / "f32.gguf")
    meta = {k: v for k, (_, v) in fields.items()}

    label = nemo.parent.name if nemo.name == "model.nemo" else nemo.stem
    if label in ARCHS:
        assert meta["parakeet.arch"] == label
    cfg = model_config(nemo)
    assert meta["general.architecture"] == "parakeet"
    assert meta["parakeet.encoder.d_model"] == cfg["encoder"]["d_model"]
    assert meta["parakeet.encoder.n_layers"] == cfg["encoder"]["n_layers"]
    assert meta["parakeet.encoder.feat_in"] == cfg["encoder"]["feat_in"]
    V = meta["parakeet.vocab_size"]
    assert meta["parakeet.blank_id"] == V == len(meta["parakeet.tokenizer.pieces"])
    if meta["parakeet.arch"] != "ctc":
        assert tensors["decoder.prediction.embed.weight"][1] == [meta["parakeet.decoder.pred_hidden"], V + 1]
    if "tdt" in meta["parakeet.arch"]:
        n_out = V + 1 + len(meta["parakeet.tdt.durations"])
        assert tensors["joint.joint_net.2.weight"][1][1] == n_out

    sd = reference_state_dict(nemo, tmp_path)
    if sd is None:
        pytest.skip("no reference state_dict (state_dict.npz or the NeMo venv) to compare values with")
    expected = {k: v for k, v in sd.items() if v.ndim > 0 and (
        not k.startswith("preprocessor.") or k in ("preprocessor.featurizer.fb", "preprocessor.featurizer.window"))}
    assert set(tensors) == set(expected)
    assert sorted(report.skipped) == sorted(set(sd) - set(expected))
    for name, want in expected.items():
        ttype, ne, data = tensors[name]
        assert ttype == "F32" and ne == list(reversed(want.shape)), name
        assert data.tobytes() == want.astype(np.float32).tobytes(), name

    convert_nemo(nemo, tmp_path / "q8.gguf", "q8_0")
    _, q = F.read_gguf(tmp_path / "q8.gguf")
    n_q = 0
    for name, want in expected.items():
        if storage_type(name, want.shape, "q8_0") == "q8_0":
            n_q += 1
            assert q[name][0] == "Q8_0" and q[name][2].tobytes() == encode_q8_0(want).tobytes(), name
        else:
            assert q[name][0] == "F32", name
    assert n_q > 0
