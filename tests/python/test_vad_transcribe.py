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


def test_chunks_are_the_speech_laid_end_to_end(model_path, audio_dir, vad_path):
    audio = speech_with_pauses(audio_dir, 16000)
    opts = {"max_segment": 4.0}
    with Context(model_path) as ctx, Vad(vad_path) as vad:
        cut = ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts)
        segments = vad.segments(audio, 16000, **opts)
        # By hand: segments grouped in order while their total stays <= 4 s, concatenated.
        chunks, total = [], 0.0
        for s in segments:
            if not chunks or total + (s["end"] - s["start"]) > 4.0 + 1e-9:
                chunks.append([])
                total = 0.0
            chunks[-1].append(s)
            total += s["end"] - s["start"]
        assert len(chunks) >= 2 and len(chunks) < len(segments)
        texts, words = [], []
        for chunk in chunks:
            spans = [(int(round(s["start"] * 16000)), int(round(s["end"] * 16000))) for s in chunk]
            t = ctx.transcribe(np.concatenate([audio[a:b] for a, b in spans]), sample_rate=16000)
            texts.append(t.text)
            bounds, at = [], 0
            for a, b in spans:
                bounds.append((at / 16000, (at + b - a) / 16000, a / 16000))
                at += b - a
            for w in t.words:
                lo, _, origin = [x for x in bounds if x[0] <= w.start][-1]
                words.append((w.text, origin + w.start - lo))
        assert cut.text == " ".join(x for x in texts if x)
        assert [w.text for w in cut.words] == [w[0] for w in words]
        assert np.allclose([w.start for w in cut.words], [w[1] for w in words], atol=1e-9)
        # Every word starts inside a speech segment of the recording; ends never precede starts.
        for w in cut.words:
            assert any(s["start"] - 1e-9 <= w.start <= s["end"] + 1e-9 for s in segments), w
            assert w.end >= w.start
        assert cut.duration == pytest.approx(len(audio) / 16000, abs=1e-3)
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
        with pytest.raises(InvalidArgument, match="mode is not an option"):
            ctx.transcribe(audio, sample_rate=16000, vad=vad_path, vad_options={"mode": "segments"})
        with pytest.raises(InvalidArgument, match="unknown key"):
            ctx.transcribe(audio, sample_rate=16000, vad=vad_path, vad_options={"bogus": 1})


def test_silence_gives_an_empty_transcript(model_path, vad_path):
    with Context(model_path) as ctx:
        t = ctx.transcribe(np.zeros(32000, np.float32), sample_rate=16000, vad=vad_path)
        assert t.text == "" and t.words == [] and t.duration == 2.0
