"""Model files the library must refuse at load with a BadModel naming the key, rather than load
and then misbehave: TDT durations with no non-zero entry (a blank could never advance; beam
search indexed with -1), and a general.alignment below what f32 tensors read in place need."""

import numpy as np
import pytest

from parakeet_py import BadModel, Context

from data_helpers import MODELS
from gguf_rewrite import rewrite_gguf

TDT = MODELS["tdt"]

pytestmark = pytest.mark.skipif(not TDT.exists(), reason=f"{TDT} has not been generated")


def test_an_unchanged_copy_loads(tmp_path):
    with Context(rewrite_gguf(TDT, tmp_path / "copy.gguf", {}, alignment=32)) as ctx:
        assert isinstance(ctx.transcribe(np.zeros(16000, np.float32), sample_rate=16000).text, str)


@pytest.mark.parametrize("durations", [[0], [0, 0, 0]])
def test_durations_without_a_non_zero_entry_are_refused(tmp_path, durations):
    bad = rewrite_gguf(TDT, tmp_path / "bad.gguf", {"parakeet.tdt.durations": durations})
    with pytest.raises(BadModel, match="tdt.durations holds no non-zero duration"):
        Context(bad)


@pytest.mark.parametrize("alignment", [1, 2])
def test_an_alignment_below_four_is_refused(tmp_path, alignment):
    bad = rewrite_gguf(TDT, tmp_path / "bad.gguf", {}, alignment=alignment)
    with pytest.raises(BadModel, match=f"general.alignment = {alignment} is below 4"):
        Context(bad)
