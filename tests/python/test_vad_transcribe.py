"""Context.transcribe(..., vad=): the recording cut at pauses by the Silero VAD, each piece
transcribed on its own, times on the recording's timeline."""

import numpy as np
import pytest

pytest.importorskip("onnx")

from parakeet_py import Cancelled, Context, InvalidArgument  # noqa: E402
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
        assert np.allclose([w.start for w in cut.words], [w[1] for w in words], atol=5e-4)  # 3 decimals
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


def test_progress_reports_the_vad_and_the_chunks_and_a_stop_cancels_either(model_path, audio_dir, vad_path):
    # Over 65.5 s (2048 VAD chunks): the VAD reports between blocks too, not only at its ends.
    audio = np.tile(speech_with_pauses(audio_dir, 16000), 6)
    assert len(audio) > 2048 * 512
    opts = {"max_segment": 4.0}
    with Context(model_path) as ctx, Vad(vad_path) as vad:
        plain = ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts)
        seen = []
        with_progress = ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts,
                                       progress=lambda f: seen.append(f) or True)
        assert with_progress.to_dict() == plain.to_dict()
        assert seen[0] == 0.0 and seen[-1] == 1.0 and seen == sorted(seen)
        assert any(0.0 < f < 0.1 for f in seen)  # the VAD's share, between its blocks
        assert len([f for f in seen if 0.1 < f < 1.0]) > 10  # the chunks' encoder layers
        stopped = []
        with pytest.raises(Cancelled):  # a stop during the VAD
            ctx.transcribe(audio, sample_rate=16000, vad=vad, progress=lambda f: stopped.append(f) or f < 0.05)
        assert 0.05 <= stopped[-1] < 0.1
        stopped.clear()
        with pytest.raises(Cancelled):  # a stop during a chunk's transcription
            ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts,
                           progress=lambda f: stopped.append(f) or f <= 0.5)
        assert 0.5 < stopped[-1] < 1.0 and len(stopped) == len([f for f in seen if f <= 0.5]) + 1
        # The backend is free again at once.
        assert ctx.transcribe(audio, sample_rate=16000, vad=vad, vad_options=opts).text == plain.text


def test_silence_gives_an_empty_transcript(model_path, vad_path):
    with Context(model_path) as ctx:
        t = ctx.transcribe(np.zeros(32000, np.float32), sample_rate=16000, vad=vad_path)
        assert t.text == "" and t.words == [] and t.duration == 2.0


def test_the_c_calls_keep_the_segments_and_the_path_twin_agrees(model_path, audio_dir, vad_path, tmp_path):
    """parakeet_capi_transcribe_{pcm,path}_json_vad_with: the document's "segments" are the
    VAD's (max_segment 30 s by default), and a WAV file gives the pcm call's document."""
    import json

    import soundfile as sf

    from parakeet_py import _native

    audio = speech_with_pauses(audio_dir, 16000)
    wav = tmp_path / "pauses.wav"
    sf.write(str(wav), audio, 16000, subtype="FLOAT")
    ffi, lib = _native.load()
    with Context(model_path) as ctx, Vad(vad_path) as vad:
        cut = ctx.transcribe(audio, sample_rate=16000, vad=vad)
        assert cut.speech_segments == vad.segments(audio, 16000, max_segment=30.0) and len(cut.speech_segments) > 1
        with ctx._using() as ptr:
            doc = _native.string_result(lib.parakeet_capi_transcribe_path_json_vad_with(
                ptr, vad.handle(), str(wav).encode(), 0, b"{}"))
            pcm_doc = _native.string_result(lib.parakeet_capi_transcribe_pcm_json_vad_with(
                ptr, vad.handle(), ffi.from_buffer("float[]", audio), audio.size, 16000, 0, b"{}"))
        assert json.loads(doc) == json.loads(pcm_doc)
        assert json.loads(doc)["text"] == cut.text
        # 22.05 kHz, a rate the VAD lacks: the library resamples it to 16 kHz first
        import soxr

        audio22 = np.ascontiguousarray(soxr.resample(audio, 16000, 22050, "HQ"), np.float32)
        with ctx._using() as ptr:
            doc22 = json.loads(_native.string_result(lib.parakeet_capi_transcribe_pcm_json_vad_with(
                ptr, vad.handle(), ffi.from_buffer("float[]", audio22), audio22.size, 22050, 0, b"{}")))
        assert doc22["duration"] == pytest.approx(audio22.size / 22050, abs=1e-3)
        assert len(doc22["segments"]) == len(cut.speech_segments)
        for got, want in zip(doc22["segments"], cut.speech_segments):  # within two 32 ms frames
            assert abs(got["start"] - want["start"]) <= 0.064 and abs(got["end"] - want["end"]) <= 0.064


def test_the_cut_does_not_depend_on_the_thread_count(model_path, audio_dir, vad_path):
    """The cut's VAD computes its features on the model's threads (one: none besides)."""
    audio = speech_with_pauses(audio_dir, 16000)
    got = []
    for threads in (1, 3):
        with Context(model_path, threads=threads) as ctx:
            got.append(ctx.transcribe(audio, sample_rate=16000, vad=vad_path).to_dict())
    assert got[0] == got[1] and got[0]["speech_segments"]


def test_chunks_of_a_long_recording_run_its_attention(model_path, audio_dir, vad_path):
    """Past 48 s "auto" is local [128, 128] for the recording, so for each chunk too (left to
    themselves, chunks of <= 30 s would run full attention)."""
    audio = np.tile(speech_with_pauses(audio_dir, 16000), 4)
    assert len(audio) > 50 * 16000
    with Vad(vad_path) as vad:
        segments = vad.segments(audio, 16000, max_segment=30.0)
        with Context(model_path) as ctx:
            cut = ctx.transcribe(audio, sample_rate=16000, vad=vad)
        with Context(model_path, attention=(128, 128)) as local:
            want = local.transcribe(audio, sample_rate=16000, vad=vad)
    assert cut.attention == (128, 128) and cut.speech_segments == segments
    assert cut.to_dict() == want.to_dict()


def test_a_prompt_models_pieces_are_transcribed_in_the_language(audio_dir, vad_path):
    from data_helpers import CACHE_AWARE_MODELS
    prompt_model = CACHE_AWARE_MODELS["ca_prompt"]
    audio = speech_with_pauses(audio_dir, 16000)
    with Context(prompt_model) as ctx, Vad(vad_path) as vad:
        segments = vad.segments(audio, 16000)
        speech = np.concatenate([audio[int(round(s["start"] * 16000)):int(round(s["end"] * 16000))]
                                 for s in segments])
        assert sum(s["end"] - s["start"] for s in segments) <= 30  # one piece
        texts = {}
        for lang in ("en-US", "de-DE", "ja-JP"):
            texts[lang] = ctx.transcribe(audio, sample_rate=16000, vad=vad, language=lang).text
            assert texts[lang] == ctx.transcribe(speech, sample_rate=16000, language=lang).text, lang
        assert len(set(texts.values())) > 1  # the prompt reached the heads
        with pytest.raises(InvalidArgument, match="unknown language 'fr-FR'"):
            ctx.transcribe(np.zeros(16000, np.float32), sample_rate=16000, vad=vad, language="fr-FR")
