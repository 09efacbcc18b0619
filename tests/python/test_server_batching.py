"""The server's stream group (--max-batch, --batch-wait-ms): concurrent live streams of a
cache-aware model run in batched steps, and those of an offline model in batched buffered
windows, and get exactly what each gets alone; the metrics count the batches; a session that
goes away leaves the group; a flood from one session does not hold the others back; bad flag
values are usage errors. Real servers on 127.0.0.1, the cache-aware and offline fixture models."""

import base64
import json
import subprocess
import sys
import threading

import numpy as np
import openai
import pytest
import soxr
from websockets.sync.client import connect

from data_helpers import CACHE_AWARE_MODELS, MODELS, SPEECH
from parakeet_cli.stream_batching import stream_group
from parakeet_py import Context, load_audio
from server_helpers import ONE_CLIENT, ROOT, ServerProcess, on_threads, wait_for
from stream_helpers import per_test_limit

pytestmark = pytest.mark.skipif(not CACHE_AWARE_MODELS["ca_rnnt_multi"].exists(),
                                reason="cache-aware fixture model missing")
_bounded = per_test_limit(300)
MODEL = CACHE_AWARE_MODELS["ca_rnnt_multi"]
# A realtime append of 0.2 s of 24 kHz pcm16: more than one 160 ms chunk per append.
APPEND_BYTES = 9600
BATCHED = ["--threads", "1", "--max-batch", "4", "--batch-wait-ms", "50", "--max-streams", "8", *ONE_CLIENT]
# The models served and their flags: the cache-aware model, and an offline model whose streams
# use short buffered windows (so that the clips make many chunks).
WINDOWS = ["--realtime-window", "1,0.5,0.5", "--sse-window", "1,0.5,0.5"]
SERVED = {"cache_aware": (MODEL, []), "buffered": (MODELS["tdt"], WINDOWS)}


@pytest.fixture(scope="module")
def pcms():
    """Three sessions' 24 kHz pcm16 audio: parts of the speech clip of different lengths."""
    up = soxr.resample(load_audio(SPEECH), 16000, 24000, "HQ")
    pcm = np.clip(np.round(up * 32767), -32768, 32767).astype("<i2").tobytes()
    return [pcm[:150000], pcm[40000:220000], pcm[100000:]]


def ws_url(srv):
    return srv.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription"


def realtime_events(srv, pcm, start=None):
    """The transcription events (without their ids) of one realtime session that sends ``pcm``
    in appends (after ``start``, a barrier, when given), then commits it."""
    with connect(ws_url(srv), open_timeout=60) as ws:
        assert json.loads(ws.recv(timeout=60))["type"] == "session.created"
        if start is not None:
            start.wait(timeout=60)
        for i in range(0, len(pcm), APPEND_BYTES):
            ws.send(json.dumps({"type": "input_audio_buffer.append",
                                "audio": base64.b64encode(pcm[i:i + APPEND_BYTES]).decode()}))
        ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
        got = []
        while True:
            event = json.loads(ws.recv(timeout=60))
            assert event["type"] != "error", event
            if "transcription" in event["type"]:
                got.append((event["type"], event.get("delta"), event.get("transcript")))
            if event["type"] == "conversation.item.input_audio_transcription.completed":
                return got


def sse_events(srv):
    client = openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0, timeout=60)
    with open(SPEECH, "rb") as f:
        return [e.to_dict() for e in client.audio.transcriptions.create(model="parakeet", file=f, stream=True)]


def all_at_once(srv, pcms):
    """Every pcm's realtime session and one SSE transcription, all at once."""
    start = threading.Barrier(len(pcms))
    return on_threads(len(pcms) + 1,
                      lambda i: realtime_events(srv, pcms[i], start) if i < len(pcms) else sse_events(srv))


@pytest.mark.parametrize("served", SERVED)
def test_concurrent_sessions_get_what_each_gets_alone_and_run_in_batches(tmp_path, pcms, served):
    model, flags = SERVED[served]
    with ServerProcess(["--threads", "1", "--max-batch", "1", *flags], tmp_path, model=model) as srv:
        unbatched = [realtime_events(srv, pcm) for pcm in pcms] + [sse_events(srv)]
        assert srv.metric("parakeet_stream_batch_size_count") == 0, "--max-batch 1: no group"
    assert all(events[-1][2] for events in unbatched[:-1]), "every session says something"
    assert unbatched[-1][-1]["type"] == "transcript.text.done" and unbatched[-1][-1]["text"]
    with ServerProcess(BATCHED + flags, tmp_path, model=model) as srv:
        alone = [realtime_events(srv, pcm) for pcm in pcms] + [sse_events(srv)]
        batches = srv.metric("parakeet_stream_batch_size_count")
        assert batches > 0 and srv.metric("parakeet_stream_batch_size_bucket", {"le": "1"}) == batches, \
            "one at a time: every batch holds one stream"
        together = all_at_once(srv, pcms)
        batches = srv.metric("parakeet_stream_batch_size_count")
        assert srv.metric("parakeet_stream_batch_size_bucket", {"le": "1"}) < batches, "some batches hold several"
        assert srv.metric("parakeet_stream_batch_size_sum") > batches
        assert srv.metric("parakeet_stream_batch_wait_seconds_count") == srv.metric("parakeet_stream_batch_size_sum")
        assert srv.metric("parakeet_stream_group_members") == 0
    assert alone == unbatched
    assert together == unbatched


def test_a_session_that_disconnects_leaves_the_group(tmp_path, pcms):
    with ServerProcess(BATCHED, tmp_path, model=MODEL) as srv:
        want = realtime_events(srv, pcms[1])
        with connect(ws_url(srv), open_timeout=60) as gone:
            assert json.loads(gone.recv(timeout=60))["type"] == "session.created"
            gone.send(json.dumps({"type": "input_audio_buffer.append",
                                  "audio": base64.b64encode(pcms[0][:96000]).decode()}))
            wait_for(lambda: srv.metric("parakeet_stream_group_members") == 1, "the session's stream joined")
            # closed mid-stream (its audio is still being fed), never committed
        got = realtime_events(srv, pcms[1])
        wait_for(lambda: srv.metric("parakeet_stream_group_members") == 0, "every stream left the group")
    assert got == want


def test_a_flood_from_one_session_does_not_hold_back_another(tmp_path, pcms):
    # One session sends 40 s in one append: fed chunk by chunk, each of its feeds is one batch
    # (so the group counts one per chunk), and a session that starts after it, with 1 s of
    # audio, gets its transcript before the flood's (fed whole, the flood's one feed would run
    # all its chunks in one batch before the other's first chunk).
    flood = pcms[2] * 4
    with ServerProcess(BATCHED, tmp_path, model=MODEL) as srv:
        order = []
        with connect(ws_url(srv), open_timeout=60) as ws:
            assert json.loads(ws.recv(timeout=60))["type"] == "session.created"
            ws.send(json.dumps({"type": "input_audio_buffer.append", "audio": base64.b64encode(flood).decode()}))
            ws.send(json.dumps({"type": "input_audio_buffer.commit"}))
            wait_for(lambda: srv.metric("parakeet_stream_batch_size_count") > 0, "the flood's first chunk ran")
            realtime_events(srv, pcms[0][:48000])
            order.append("short")
            while json.loads(ws.recv(timeout=120))["type"] != "conversation.item.input_audio_transcription.completed":
                pass
            order.append("flood")
        chunks = len(flood) // 2 / 24000 / 0.16
        assert srv.metric("parakeet_stream_batch_size_count") >= chunks - 1
    assert order == ["short", "flood"]


def test_the_batch_wait_defaults_to_none_for_buffered_windows():
    # A buffered window is compute-bound alone: it waits for no other by default (a cache-aware
    # step waits 20 ms); a wait that is given applies to both; --max-batch 1: no group.
    with Context(MODEL) as cache_aware, Context(MODELS["tdt"]) as offline:
        assert stream_group(cache_aware, 4, None).max_wait_ms == 20
        assert stream_group(offline, 4, None).max_wait_ms == 0
        assert stream_group(offline, 4, 7).max_wait_ms == 7
        assert stream_group(offline, 1, None) is None


@pytest.mark.parametrize("flag,value", [("--max-batch", "0"), ("--max-batch", "two"), ("--batch-wait-ms", "-1"),
                                        ("--batch-wait-ms", "1001")])
def test_bad_batch_flags_are_usage_errors(flag, value):
    r = subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(MODEL), flag, value], cwd=ROOT,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and f"Invalid value for '{flag}'" in r.stderr and "Traceback" not in r.stderr
