"""Model files written by ggml itself load and run: the files parakeet.cpp's ``parakeet-cli
quantize`` writes (ggml loads the model, ``ggml_quantize_chunk`` quantises the matmul weights,
ggml's GGUF writer stores it, dropping each tensor's trailing size-1 ne dimensions, so the
filterbank [1, 80, 257] is stored as [80, 257]). The fixture models go through libggml-base.so of
parakeet.cpp's wheel (``ggml_helpers``); an ASR model at every K-quant type and q8_0 transcribes as
our own quantiser's file of the same blocks does; a diarization model and a Silero VAD model written
by ggml unchanged give the results of the files they came from."""

import gguf
import numpy as np
import pytest

from data_helpers import AUDIO, MODEL, NEMO_DIR, SPEECH
from ggml_helpers import libggml, quantize_as_parakeet_cpp
from parakeet_py import Context, Diarizer
from parakeet_py.convert import requantize_gguf
from parakeet_py.convert.quantize import is_matmul_weight

FILTERBANK = "preprocessor.featurizer.fb"


def _tensors(path):
    return {t.name: t for t in gguf.GGUFReader(path).tensors}


def _transcript(path):
    with Context(str(path)) as ctx:
        t = ctx.transcribe(str(SPEECH))
    return t.text, list(t.tokens)


@pytest.mark.parametrize("type_name", ["q4_k", "q5_k", "q6_k", "q8_0"])
def test_a_model_quantised_by_ggml_loads_and_transcribes_as_ours(tmp_path, type_name):
    theirs, ours = tmp_path / f"ggml-{type_name}.gguf", tmp_path / f"ours-{type_name}.gguf"
    quantised = quantize_as_parakeet_cpp(libggml(), MODEL, theirs, type_name, is_matmul_weight)
    requantize_gguf(MODEL, ours, type_name)
    their_tensors, our_tensors = _tensors(theirs), _tensors(ours)
    # The layout this test is about: ggml dropped the filterbank's size-1 dimension, ours kept it.
    assert len(their_tensors[FILTERBANK].shape) == 2 and len(our_tensors[FILTERBANK].shape) == 3
    # The same tensors quantised, to the same blocks: ggml's reference quantiser and ours agree.
    assert quantised
    assert sorted(quantised) == sorted(n for n, t in our_tensors.items() if t.tensor_type.name == type_name.upper())
    for name in quantised:
        assert np.array_equal(np.asarray(their_tensors[name].data).view(np.uint8),
                              np.asarray(our_tensors[name].data).view(np.uint8)), name
    text, tokens = _transcript(theirs)
    assert tokens, "a quantised model must still transcribe"
    assert (text, tokens) == _transcript(ours)


def test_a_diarization_model_written_by_ggml_gives_the_same_segments(tmp_path):
    source = NEMO_DIR / "sortformer_offline" / "model.gguf"
    theirs = tmp_path / "ggml.gguf"
    assert quantize_as_parakeet_cpp(libggml(), source, theirs, "q8_0", lambda name: False) == []
    assert len(_tensors(theirs)[FILTERBANK].shape) == 2
    clip = AUDIO / "conversation_16k.wav"
    with Diarizer(source) as d:
        want = d.diarize(clip)
    with Diarizer(theirs) as d:
        assert d.diarize(clip) == want
    assert want


def test_a_silero_vad_model_written_by_ggml_gives_the_same_probabilities(tmp_path, audio_dir):
    """Silero's output convolution [1, 128, 1] is stored by ggml with its last ne dimension
    dropped; the VAD reader compares shapes as the other kinds do."""
    pytest.importorskip("onnx")
    from parakeet_py.convert.silero_onnx import convert_silero_onnx
    from parakeet_py.vad import Vad, package_onnx
    from vad_helpers import speech_with_pauses

    source, theirs = tmp_path / "silero.gguf", tmp_path / "silero-ggml.gguf"
    convert_silero_onnx(package_onnx(), source, "f32")
    assert quantize_as_parakeet_cpp(libggml(), source, theirs, "q8_0", lambda name: False) == []
    assert len(_tensors(theirs)["vad16k.decoder.decoder.2.weight"].shape) == 2
    audio = speech_with_pauses(audio_dir, 16000)
    with Vad(source) as v:
        want = v.probabilities(audio, 16000)
    with Vad(theirs) as v:
        assert np.array_equal(v.probabilities(audio, 16000), want)
