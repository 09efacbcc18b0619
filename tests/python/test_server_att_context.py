"""``--att-context L,R`` of ``parakeet-server`` and ``parakeet-cli wyoming``: the live streams of a
cache-aware model run in the attention context chosen (its chunks and lookahead), not the
model's first; a context the model lacks, or the flag on an offline model, is a usage error at
start. Real services on 127.0.0.1, the multi-context cache-aware fixture model (contexts 8,1
(its first), 8,0 and 8,3), whose streamed texts differ by context."""

import asyncio
import base64
import json
import subprocess
import sys

import httpx
import numpy as np
import pytest
import soundfile
import soxr
from websockets.sync.client import connect

from data_helpers import CACHE_AWARE_MODELS, MODELS, SPEECH
from server_helpers import ROOT, ServerProcess
from stream_helpers import per_test_limit
from wyoming_helpers import WyomingProcess, utterance

pytestmark = pytest.mark.skipif(not CACHE_AWARE_MODELS["ca_rnnt_multi"].exists(),
                                reason="cache-aware fixture model missing")
_bounded = per_test_limit(300)
MODEL = CACHE_AWARE_MODELS["ca_rnnt_multi"]
APPEND_BYTES = 9600  # 0.2 s of 24 kHz pcm16 per realtime append


@pytest.fixture(scope="module")
def speech16():
    samples, rate = soundfile.read(SPEECH, dtype="int16")
    assert rate == 16000 and samples.ndim == 1
    return samples


def streamed_text(samples16, att_context, finalize=True):
    """The library's own stream of the 16 kHz samples under ``att_context``: its text once it
    has them all (and, with ``finalize``, once it is finalized)."""
    from parakeet_py import Context
    with Context(MODEL) as ctx, ctx.stream(att_context=att_context) as stream:
        stream.feed(samples16.astype(np.float32) / 32768.0)
        if finalize:
            stream.finalize()
        return stream.text


def realtime_transcript(srv, pcm24):
    """The completed transcript of one realtime session that appends ``pcm24`` and commits it."""
    with connect(srv.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription", open_timeout=60) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "session.created"
        for i in range(0, len(pcm24), APPEND_BYTES):
            ws.send(json.dumps({"type": "input_audio_buffer.append",
                                "audio": base64.b64encode(pcm24[i:i + APPEND_BYTES]).decode()}))
        ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        while True:
            event = json.loads(ws.recv(timeout=60))
            assert event["type"] != "error", event
            if event["type"] == "conversation.item.input_audio_transcription.completed":
                return event["transcript"]


def test_realtime_sessions_stream_in_the_context_chosen(tmp_path, speech16):
    up = soxr.resample(speech16.astype(np.float32) / 32768.0, 16000, 24000, "HQ")
    pcm24 = np.clip(np.round(up * 32767), -32768, 32767).astype("<i2")
    # what the server hears: the session's pcm at 16 kHz (one soxr stream over all its appends)
    heard = soxr.ResampleStream(24000, 16000, 1, dtype="float32").resample_chunk(
        pcm24.astype(np.float32) / 32768.0, last=True)
    heard16 = np.round(heard * 32768.0).astype(np.int16)
    assert streamed_text(heard16, [8, 3]) != streamed_text(heard16, [8, 1]), "the contexts must tell apart"
    texts = {}
    for flags in ([], ["--att-context", "8,3"]):
        with ServerProcess(["--threads", "1", *flags], tmp_path, model=MODEL) as srv:
            texts[tuple(flags)] = realtime_transcript(srv, pcm24.tobytes())
            limits = httpx.get(srv.url + "/health", timeout=10).json()["streams"]
            assert limits.get("att_context") == ([8, 3] if flags else None)
    assert texts[()] == streamed_text(heard16, None)
    assert texts[("--att-context", "8,3")] == streamed_text(heard16, [8, 3])


def test_wyoming_live_text_streams_in_the_context_chosen(tmp_path, speech16):
    # the live words are the stream's before it is finalized (the transcript is the offline pass's)
    def live_text(flags):
        with WyomingProcess(["--threads", "1", *flags], tmp_path, model=MODEL) as srv:
            async def run():
                async with srv.client() as client:
                    return await utterance(client, speech16.tobytes(), 16000)
            events = asyncio.run(run())
        return "".join(e.data["text"] for e in events if e.type == "transcript-chunk")

    for att_context in ([8, 3], [8, 0]):
        want = streamed_text(speech16, att_context, finalize=False)
        assert want != streamed_text(speech16, [8, 1], finalize=False)
        assert live_text(["--att-context", ",".join(map(str, att_context))]).strip() == want.strip()


@pytest.mark.parametrize("command", [["-m", "parakeet_cli.server", "--vad-model", "none"],
                                     ["-m", "parakeet_cli.main", "wyoming"]])
@pytest.mark.parametrize("model,value,message", [
    (MODEL, "8,2", "--att-context 8,2 is not one of this model's contexts (8,1, 8,0, 8,3)"),
    (MODELS["tdt"], "8,1", "--att-context applies to cache-aware streaming models"),
    (MODEL, "8", "Invalid value for '--att-context': '8' is not L,R (two whole numbers)"),
])
def test_a_context_the_model_lacks_is_a_usage_error(command, model, value, message):
    r = subprocess.run([sys.executable, *command, "--model", str(model), "--att-context", value], cwd=ROOT,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr, r.stderr
