"""``parakeet-cli wyoming``, Home Assistant's speech-to-text service, driven by the ``wyoming``
package's own client against the real service in a subprocess on 127.0.0.1."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import List, Tuple

import numpy as np
import pytest
import soundfile
from wyoming.asr import Transcribe
from wyoming.audio import AudioStop

from cli_helpers import run_cli
from data_helpers import AUDIO, MODEL, SPEECH
from parakeet_py import __version__
from server_helpers import wait_for
from wyoming_helpers import (WyomingProcess, answer, describe, send_audio, transcript_text, until_live, utterance,
                             write_wav)

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")

STEREO_44K = AUDIO / "speech_44k_stereo.wav"


def cli_text(wav: Path, *extra: str, model: Path = MODEL) -> str:
    """``parakeet-cli transcribe``'s text for a file."""
    result = run_cli("transcribe", "-m", model, *extra, wav)
    assert result.exit_code == 0, result.stderr
    return result.stdout.rstrip("\n")


def pcm16(path: Path) -> Tuple[bytes, int, int]:
    """A clip's 16-bit samples as raw interleaved PCM, its rate and channels."""
    samples, rate = soundfile.read(path, dtype="int16", always_2d=True)
    return samples.tobytes(), rate, samples.shape[1]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    with WyomingProcess(["-c", "2"], tmp_path_factory.mktemp("wyoming")) as srv:
        yield srv


@pytest.fixture(scope="module")
def speech_text():
    return cli_text(SPEECH)


def test_describe_answers_info_with_an_asr_program(service):
    async def run():
        async with service.client() as client:
            return await describe(client)

    (program,) = asyncio.run(run()).asr
    assert program.name == "parakeet" and program.version == __version__ and program.installed
    assert program.supports_transcript_streaming
    (model,) = program.models
    assert model.name == MODEL.name and model.languages == ["en"]
    assert model.attribution.name == "NVIDIA" and model.attribution.url.startswith("https://")


def test_words_come_live_and_the_transcript_is_the_cli_text(service, speech_text):
    pcm, rate, channels = pcm16(SPEECH)

    async def run():
        async with service.client() as client:
            live = await until_live(client, pcm, rate, channels)  # before the client says the audio ended
            await client.write_event(AudioStop().event())
            return live, await answer(client)

    live, rest = asyncio.run(run())
    assert [e.type for e in live] == ["transcript-start", "transcript-chunk"] and live[-1].data["text"]
    types = [e.type for e in live + rest]
    assert types[-2:] == ["transcript", "transcript-stop"]
    assert set(types[1:-2]) == {"transcript-chunk"}
    assert transcript_text(rest) == speech_text


# Each clip as the client declares it: (rate, width, channels, its 16-bit samples → that width).
FORMATS = {
    "44.1kHz-stereo-16bit": lambda s: s.astype("<i2"),
    "44.1kHz-stereo-24bit": lambda s: np.ascontiguousarray(
        (s.astype("<i4") << 8).view(np.uint8).reshape(*s.shape, 4)[..., :3]),
    "44.1kHz-stereo-32bit": lambda s: s.astype("<i4") << 16,
    "44.1kHz-mono-8bit": lambda s: ((s[:, :1].astype(np.int32) >> 8) + 128).astype(np.uint8),
}


@pytest.mark.parametrize("name", list(FORMATS))
def test_any_format_gives_the_text_of_the_same_audio_as_a_wav_file(service, tmp_path, name):
    samples, rate = soundfile.read(STEREO_44K, dtype="int16", always_2d=True)
    converted = FORMATS[name](samples)
    channels = 1 if "mono" in name else 2
    width = converted.nbytes // (len(samples) * channels)
    pcm = converted.tobytes()
    wav = write_wav(tmp_path / f"{name}.wav", pcm, rate, width, channels)
    events = asyncio.run(_one(service, pcm, rate, width, channels))
    assert transcript_text(events) == cli_text(wav)


async def _one(service, pcm: bytes, rate: int, width: int, channels: int, **kw) -> List:
    async with service.client() as client:
        return await utterance(client, pcm, rate, width, channels, **kw)


def test_eight_clients_at_once(service, speech_text):
    clips = [pcm16(SPEECH), pcm16(STEREO_44K)] * 4
    wanted = [speech_text, cli_text(STEREO_44K)] * 4

    async def run():
        clients = [service.client() for _ in clips]
        for client in clients:
            await client.connect()
        # every utterance open at once (each answered transcript-start), then all end together
        await asyncio.gather(*(c.write_event(Transcribe().event()) for c in clients))
        await asyncio.gather(*(send_audio(c, *clip[:2], 2, clip[2]) for c, clip in zip(clients, clips)))
        starts = await asyncio.gather(*(answer(c, last="transcript-start") for c in clients))
        await asyncio.gather(*(c.write_event(AudioStop().event()) for c in clients))
        answers = await asyncio.gather(*(answer(c) for c in clients))
        for client in clients:
            await client.disconnect()
        return starts, answers

    starts, answers = asyncio.run(run())
    assert all(s[0].type == "transcript-start" for s in starts)
    assert [transcript_text(a) for a in answers] == wanted


def test_a_client_that_leaves_mid_utterance_frees_it(service, speech_text):
    pcm, rate, channels = pcm16(SPEECH)

    async def leave():
        async with service.client() as client:
            await until_live(client, pcm, rate, channels)  # its stream is running
        # leaving the block closes the socket without audio-stop

    asyncio.run(leave())
    wait_for(lambda: "left mid-utterance; its stream and audio are freed (utterances open: 0)" in service.log(),
             "the service to free the utterance")
    assert transcript_text(asyncio.run(_one(service, pcm, rate, 2, channels))) == speech_text


def test_a_unix_socket(tmp_path, speech_text):
    socket_path = tmp_path / "stt.sock"
    pcm, rate, channels = pcm16(SPEECH)
    with WyomingProcess([], tmp_path, uri=f"unix://{socket_path}") as srv:
        assert srv.uri == f"unix://{socket_path}"
        assert transcript_text(asyncio.run(_one(srv, pcm, rate, 2, channels))) == speech_text
    assert not socket_path.exists()  # removed when the service stops
