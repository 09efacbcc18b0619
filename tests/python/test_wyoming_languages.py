"""``parakeet-cli wyoming`` with a prompt-conditioned (multilingual) model: ``info`` lists its
locales, a client's ``transcribe`` language picks the prompt (a bare language its first
locale), an unknown one is an error; and the service without live text (--no-streaming)."""

from __future__ import annotations

import asyncio

import pytest
import soundfile
from wyoming.asr import Transcribe

from cli_helpers import run_cli
from data_helpers import CACHE_AWARE_MODELS, MODEL, SPEECH
from wyoming_helpers import WyomingProcess, describe, read, transcript_text, utterance

PROMPT = CACHE_AWARE_MODELS["ca_prompt"]  # a cache-aware model: its live text streams without windows

pytestmark = pytest.mark.skipif(not PROMPT.exists(), reason="prompt fixture model missing")


def speech_pcm() -> bytes:
    return soundfile.read(SPEECH, dtype="int16")[0].tobytes()


def cli_text(model, *extra) -> str:
    result = run_cli("transcribe", "-m", model, *extra, SPEECH)
    assert result.exit_code == 0, result.stderr
    return result.stdout.rstrip("\n")


async def session(srv, *utterances):
    """``info``, then the answer to the speech clip sent with each of ``utterances``' keywords,
    on one connection."""
    async with srv.client() as client:
        info = await describe(client)
        return info, [await utterance(client, speech_pcm(), 16000, **kw) for kw in utterances]


def test_a_prompt_model_lists_its_locales_and_transcribes_in_the_one_asked(tmp_path):
    async def unknown_language(srv):
        async with srv.client() as client:
            await client.write_event(Transcribe(language="fr").event())
            return await read(client)

    with WyomingProcess([], tmp_path, model=PROMPT) as srv:
        info, (german, japanese, default) = asyncio.run(session(srv, {"language": "de"}, {"language": "ja-jp"}, {}))
        unknown = asyncio.run(unknown_language(srv))
    assert info.asr[0].models[0].languages == ["en-US", "de-DE", "ja-JP"]
    assert transcript_text(german) == cli_text(PROMPT, "--language", "de-DE")
    assert transcript_text(japanese) == cli_text(PROMPT, "--language", "ja-JP")
    assert transcript_text(default) == cli_text(PROMPT)
    assert [e.data.get("language") for e in german if e.type in ("transcript-start", "transcript")] == ["de-DE"] * 2
    assert unknown.type == "error"
    assert unknown.data["text"] == "unknown language 'fr'; this model knows: en-US, de-DE, ja-JP"


def test_the_languages_and_beam_size_options_and_no_live_text(tmp_path):
    with WyomingProcess(["--no-streaming", "--languages", "en,de", "--beam-size", "2"], tmp_path) as srv:
        info, (first, second) = asyncio.run(session(srv, {"last": "transcript"}, {"last": "transcript"}))
    assert info.asr[0].supports_transcript_streaming is False
    assert info.asr[0].models[0].languages == ["en", "de"]
    # the transcript alone: the second utterance's first event is its transcript
    assert [e.type for e in first] == [e.type for e in second] == ["transcript"]
    assert transcript_text(first) == transcript_text(second) == cli_text(MODEL, "--beam", "2")


def test_an_unknown_default_language_is_a_usage_error():
    result = run_cli("wyoming", "-m", PROMPT, "--language", "fr-FR")
    assert result.exit_code == 2
    assert "unknown language 'fr-FR'; this model knows: en-US, de-DE, ja-JP" in result.stderr
