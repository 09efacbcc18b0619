"""Context.transcribe(..., vad=): the recording cut at pauses by the Silero VAD, each piece
transcribed on its own, times on the recording's timeline."""

import numpy as np
import pytest

pytest.importorskip("onnx")

from parakeet_py import Context, InvalidArgument  # noqa: E402
from parakeet_py.convert.silero_onnx import convert_silero_onnx  # noqa: E402
from parakeet_py.vad import Vad, package_onnx  # noqa: E402
from vad_helpers import speech_with_pauses  # noqa: E402


@pytest.fixture(scope="module")
def vad_path(tmp_path_factory):
    p = tmp_path_factory.mktemp("vadtr") / "silero.gguf"
    convert_silero_onnx(package_onnx(), p)
    return p


def test_pieces_are_transcribed_and_shifted(model_path, audio_dir, vad_path):
    audio = speech_with_pauses(audio_dir, 16000)
    opts = {"max_segment": 4.0}
    with Context(model_path) as ctx, Vad(vad_path) as vad:
        cut = ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts)
        pieces = vad.segments(audio, 16000, mode="segments", **opts)
        assert len(pieces) >= 3
        words, texts = [], []
        for p in pieces:
            first, last = int(round(p["start"] * 16000)), int(round(p["end"] * 16000))
            t = ctx.transcribe(audio[first:last], sample_rate=16000)
            texts.append(t.text)
            words += [(w.text, w.start + first / 16000, w.end + first / 16000) for w in t.words]
        assert cut.text == " ".join(x for x in texts if x)
        assert [w.text for w in cut.words] == [w[0] for w in words]
        assert np.allclose([(w.start, w.end) for w in cut.words], [w[1:] for w in words], atol=1e-9)
        assert cut.duration == pytest.approx(len(audio) / 16000, abs=1e-3)
        # Each word lies inside its piece, so within the recording, in order.
        starts = [w.start for w in cut.words]
        assert starts == sorted(starts)
        for w in cut.words:
            assert any(p["start"] - 1e-6 <= w.start <= p["end"] + 0.1 for p in pieces)
        # A path works as well as a loaded model.
        assert ctx.transcribe(audio, sample_rate=16000, vad=vad_path, vad_options=opts).text == cut.text


def test_vad_refuses_other_modes_and_bad_models(model_path, audio_dir, vad_path):
    audio = speech_with_pauses(audio_dir, 16000)
    with Context(model_path) as ctx:
        with pytest.raises(InvalidArgument, match="no beam"):
            ctx.transcribe(audio, sample_rate=16000, vad=vad_path, beam=2)
        with pytest.raises(InvalidArgument, match="not a Silero VAD model"):
            ctx.transcribe(audio, sample_rate=16000, vad=model_path)
        with pytest.raises(InvalidArgument, match="vad must be"):
            ctx.transcribe(audio, sample_rate=16000, vad=3)
        with pytest.raises(InvalidArgument, match="unknown key"):
            ctx.transcribe(audio, sample_rate=16000, vad=vad_path, vad_options={"bogus": 1})


def test_silence_gives_an_empty_transcript(model_path, vad_path):
    with Context(model_path) as ctx:
        t = ctx.transcribe(np.zeros(32000, np.float32), sample_rate=16000, vad=vad_path)
        assert t.text == "" and t.words == [] and t.duration == 2.0
