"""Shared by the tests of the 2-D speaker encoders (test_speaker_resnet.py,
test_speaker_eres2net.py): reading the committed fixtures (tools/fixtures/
make_2d_speaker_fixtures.py) and checking an embedding against the PyTorch reference's."""

from pathlib import Path

import gguf
import numpy as np

from parakeet_py import SpeakerEncoder

DATA = Path(__file__).resolve().parents[1] / "data" / "speaker"


def tensors(path):
    return {t.name: np.array(t.data) for t in gguf.GGUFReader(str(path)).tensors}


def keys(path):
    r = gguf.GGUFReader(str(path))
    return {f.name: f.contents() for f in r.fields.values() if not f.name.startswith("GGUF.")}


def clip(reference: str, name: str):
    """The clip's 16 kHz samples and the reference's embedding of it (``<reference>_ref.gguf``)."""
    return tensors(DATA / f"ref_{name}.gguf")["pcm"].astype(np.float32), \
        tensors(DATA / f"{reference}_ref.gguf")[f"embedding.{name}"]


def assert_embeds_like_pytorch(model, reference: str, name: str, family: str, dim: int) -> None:
    """The model's embedding of the clip within cosine 0.9999 and 1e-4 of the reference's."""
    pcm, want = clip(reference, name)
    with SpeakerEncoder(model) as enc:
        got = enc.embed(pcm, sample_rate=16000)
        assert enc.family == family
    assert got.shape == (dim,) and float(got @ want) >= 0.9999 and np.abs(got - want).max() <= 1e-4
