"""``parakeet-cli wyoming`` and clients that get it wrong: every bad event is answered with an
``error`` event and the connection goes on; an event whose lengths lose the framing ends only
its own connection; an utterance past --max-seconds is dropped with an error."""

from __future__ import annotations

import asyncio
import json

import pytest
import soundfile
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.event import Event, async_read_event, async_write_event
from wyoming.ping import Ping

from cli_helpers import run_cli
from data_helpers import AUDIO, MODEL, SPEECH
from wyoming_helpers import EVENT_TIMEOUT_SEC, WyomingProcess, describe, read, send_audio, transcript_text, utterance

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")

SHORT = AUDIO / "speech_44k_stereo.wav"  # 2.2 s


def header(event_type: str, **fields) -> bytes:
    return json.dumps({"type": event_type, **fields}).encode() + b"\n"


# (what the client sends: raw bytes or an Event, a piece of the error's text)
BAD_EVENTS = [
    (b"this is not json\n", "header line is not JSON"),
    (b'{"data": {"text": "no type"}}\n', "a string 'type'"),
    (b"[1, 2, 3]\n", "a string 'type'"),
    (header("transcribe", data_length=5) + b"nope!", "transcribe: its data is not JSON"),
    (Event("audio-start", {"rate": 16000, "width": 5, "channels": 1}), "width 5 is not 1, 2, 3 or 4"),
    (Event("audio-start", {"rate": 0, "width": 2, "channels": 1}), "rate 0 Hz is outside"),
    (Event("audio-chunk", {"rate": "fast", "width": 2, "channels": 1}), "'rate' must be a whole number"),
    (Event("audio-chunk", {"width": 2, "channels": 1}), "'rate' must be a whole number, not None"),
    (Event("audio-stop"), "audio-stop: no audio was sent"),
    (Event("transcribe", {"language": 3}), "transcribe: 'language' must be a string"),
]


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    # the CTC head here (the stream and the final pass): the texts below are `transcribe -d ctc`'s
    with WyomingProcess(["--max-seconds", "5", "-d", "ctc"], tmp_path_factory.mktemp("wyoming")) as srv:
        yield srv


def short_text():
    """``transcribe -d ctc``'s text for the short clip."""
    return run_cli("transcribe", "-m", MODEL, "-d", "ctc", SHORT).stdout.rstrip("\n")


def short_utterance():
    samples, rate = soundfile.read(SHORT, dtype="int16", always_2d=True)
    return samples.tobytes(), rate, samples.shape[1]


def test_each_bad_event_gets_an_error_and_the_connection_goes_on(service):
    pcm, rate, channels = short_utterance()
    wanted = short_text()

    async def run():
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        errors = []
        for bad, _ in BAD_EVENTS:
            if isinstance(bad, bytes):
                writer.write(bad)
            else:
                await async_write_event(bad, writer)
            errors.append(await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC))
        # an utterance whose chunks go wrong midway: the bad chunks are dropped, the rest counts
        await async_write_event(AudioStart(rate=rate, width=2, channels=channels).event(), writer)
        assert (await async_read_event(reader)).type == "transcript-start"
        half = len(pcm) // 2 // 4 * 4
        await async_write_event(AudioChunk(rate=rate, width=2, channels=channels, audio=pcm[:half]).event(), writer)
        for chunk in (AudioChunk(rate=rate, width=2, channels=channels, audio=b"odd"),
                      AudioChunk(rate=16000, width=2, channels=channels, audio=pcm[:64])):
            await async_write_event(chunk.event(), writer)
            errors.append(await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC))
        await async_write_event(AudioChunk(rate=rate, width=2, channels=channels, audio=pcm[half:]).event(), writer)
        await async_write_event(AudioStop().event(), writer)
        answer = []
        while not answer or answer[-1].type != "transcript-stop":
            answer.append(await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC))
        await async_write_event(Ping(text="still there?").event(), writer)
        pong = await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC)
        writer.close()
        return errors, answer, pong

    errors, answer, pong = asyncio.run(run())
    wanted_errors = [text for _, text in BAD_EVENTS] + ["not a whole number of 4-byte frames", "differs from"]
    assert [e.type for e in errors] == ["error"] * len(wanted_errors)
    for error, text in zip(errors, wanted_errors):
        assert text in error.data["text"] and error.data["code"] == "bad-event", error.data
    assert transcript_text(answer) == wanted
    assert pong.type == "pong" and pong.data["text"] == "still there?"


@pytest.mark.parametrize("lengths", [{"payload_length": -1}, {"data_length": "ten"}, {"payload_length": 1 << 40}])
def test_lengths_that_lose_the_framing_end_that_connection_only(service, lengths):
    async def run():
        reader, writer = await asyncio.open_connection("127.0.0.1", service.port)
        writer.write(header("audio-chunk", **lengths))
        error = await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC)
        after = await asyncio.wait_for(async_read_event(reader), EVENT_TIMEOUT_SEC)
        writer.close()
        async with service.client() as client:  # the service itself goes on
            info = await describe(client)
        return error, after, info

    error, after, info = asyncio.run(run())
    assert error.type == "error" and "must be a whole number in 0.." in error.data["text"]
    assert after is None  # the service closed the connection
    assert info.asr[0].name == "parakeet"


def test_an_utterance_past_max_seconds_is_dropped_and_the_next_one_served(service):
    long_pcm = soundfile.read(SPEECH, dtype="int16")[0].tobytes()  # 9.6 s > --max-seconds 5
    pcm, rate, channels = short_utterance()

    async def run():
        async with service.client() as client:
            await send_audio(client, long_pcm, 16000, 2, 1)
            await client.write_event(AudioStop().event())
            dropped = []
            while not dropped or dropped[-1].type != "transcript-stop":
                dropped.append(await read(client))
            return dropped, await utterance(client, pcm, rate, 2, channels)

    dropped, served = asyncio.run(run())
    types = [e.type for e in dropped]
    assert types[0] == "transcript-start" and types[-2:] == ["error", "transcript-stop"]
    assert "transcript" not in types
    assert dropped[-2].data == {"text": "an utterance may hold at most 5 s of audio; it is dropped",
                                "code": "too-long"}
    assert transcript_text(served) == short_text()
    # the served utterance's first event is its own transcript-start: nothing of the dropped one
    # (its later chunks, its audio-stop) was answered
    assert served[0].type == "transcript-start"


@pytest.mark.parametrize("args, message", [
    (["--uri", "http://127.0.0.1:10300"], "use tcp://HOST:PORT or unix://PATH"),
    (["--uri", "tcp://127.0.0.1"], "a tcp:// URI needs a host and a port"),
    (["--uri", "unix:///tmp/x.sock", "--zeroconf"], "--zeroconf announces tcp:// services only"),
    (["--stream-window", "10,0,2"], "CHUNK must be >= 0.08 s"),
])
def test_bad_options_are_usage_errors(args, message):
    result = run_cli("wyoming", "-m", MODEL, *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr
