"""``stream=true`` on /v1/audio/transcriptions through the official openai client (SSE): the
events join to the Python stream's text, more concurrent streams than backends give the
single-stream results, a full server refuses cleanly, a vanished client frees its stream;
and every documented request field is checked (a bad value is a 400 naming it)."""

import json
from concurrent.futures import ThreadPoolExecutor

import httpx
import openai
import pytest

from parakeet_py import Context, load_audio
from server_helpers import AUDIO, ONE_CLIENT, ServerProcess, long_wav_bytes, wait_for
from stream_helpers import MODELS, SMALL, SMALL_WINDOW, SPEECH, per_test_limit, run_stream

MODEL = MODELS["tdt"]
CLIPS = [SPEECH, AUDIO / "short_1s_16k.wav", AUDIO / "speech_44k_stereo.wav", AUDIO / "long_30s_16k.wav"]
URL = "/v1/audio/transcriptions"
WAIT_SEC = 60

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")


_bounded = per_test_limit(240)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess(["--concurrency", "2", "--threads", "1", "--sse-window", SMALL_WINDOW, "--max-streams", "8", *ONE_CLIENT],
                       tmp_path_factory.mktemp("sse"), model=MODEL, vad=None) as srv:  # the package VAD
        yield srv


@pytest.fixture(scope="module")
def expected():
    """Each clip's text by an in-process Python stream with the server's window."""
    with Context(MODEL) as ctx:
        return {clip.name: run_stream(ctx.stream(**SMALL), load_audio(clip), [len(load_audio(clip))])[0]
                for clip in CLIPS}


def client(srv):
    return openai.OpenAI(base_url=srv.url + "/v1", api_key="unused", max_retries=0, timeout=WAIT_SEC)


def stream_events(srv, clip, **kw):
    with open(clip, "rb") as f:
        return list(client(srv).audio.transcriptions.create(model="parakeet", file=f, stream=True, **kw))


def test_openai_client_streams_deltas_then_done(server, expected):
    events = stream_events(server, SPEECH)
    deltas = [e for e in events if e.type == "transcript.text.delta"]
    assert len(deltas) > 3 and events[-1].type == "transcript.text.done"
    assert all(e.type == "transcript.text.delta" for e in events[:-1])
    assert "".join(e.delta for e in deltas) == events[-1].text == expected[SPEECH.name]


def test_stream_with_text_format_and_checked_options(server, expected):
    events = stream_events(server, SPEECH, response_format="text", language="en", temperature=0.0,
                           prompt="anything", chunking_strategy="auto")
    assert events[-1].text == expected[SPEECH.name]


def test_sse_wire_format(server):
    with open(SPEECH, "rb") as f:
        r = httpx.post(server.url + URL, files={"file": ("s.wav", f.read(), "audio/wav")},
                       data={"stream": "true"}, timeout=WAIT_SEC)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
    blocks = [b for b in r.text.split("\n\n") if b]
    assert all(b.startswith("data: {") and "\n" not in b for b in blocks)


def test_more_concurrent_streams_than_backends_give_single_stream_results(server, expected):
    clips = CLIPS * 2  # 8 streams on 2 backends

    def one(clip):
        return stream_events(server, clip)[-1].text

    with ThreadPoolExecutor(len(clips)) as pool:
        texts = list(pool.map(one, clips, timeout=WAIT_SEC * 3))
    assert texts == [expected[c.name] for c in clips]
    assert server.metric("parakeet_streams_total", {"kind": "sse"}) >= len(clips)
    assert server.metric("parakeet_stream_chunk_latency_seconds_count", {"kind": "sse"}) > 0


def test_bad_audio_in_a_stream_is_a_400_before_any_event(server):
    r = httpx.post(server.url + URL, files={"file": ("x.wav", b"not audio at all", "audio/wav")},
                   data={"stream": "true"}, timeout=WAIT_SEC)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_audio"



def test_a_client_vanishing_mid_stream_frees_its_stream(server, expected):
    body = long_wav_bytes(120)  # many chunks: the stream is surely still running when we leave
    fed_before = server.metric("parakeet_stream_audio_seconds_total")
    with httpx.Client(timeout=WAIT_SEC) as http:
        with http.stream("POST", server.url + URL, files={"file": ("long.wav", body, "audio/wav")},
                         data={"stream": "true"}) as r:
            assert r.status_code == 200
            next(r.iter_bytes())  # the first event, then hang up
    wait_for(lambda: server.metric("parakeet_live_streams", {"kind": "sse"}) == 0, "the stream to be freed")
    fed = server.metric("parakeet_stream_audio_seconds_total") - fed_before
    assert 0 < fed < 60, f"{fed} s of the 120 s were decoded: the stream did not stop when its client left"
    assert httpx.get(server.url + "/health", timeout=5).json()["streams"]["open"] == 0
    assert stream_events(server, SPEECH)[-1].text == expected[SPEECH.name]


def test_a_full_server_refuses_streams_cleanly(tmp_path):
    from websockets.sync.client import connect

    with ServerProcess(["--sse-window", SMALL_WINDOW, "--max-streams", "1"], tmp_path, model=MODEL) as srv:
        with httpx.Client(timeout=WAIT_SEC) as http:
            # An open realtime session holds the one slot for as long as it stays connected.
            with connect(srv.url.replace("http", "ws") + "/v1/realtime?intent=transcription",
                         open_timeout=WAIT_SEC) as held:
                assert json.loads(held.recv(timeout=WAIT_SEC))["type"] == "session.created"
                r = http.post(srv.url + URL, files={"file": ("s.wav", SPEECH.read_bytes(), "audio/wav")},
                              data={"stream": "true"})
                assert r.status_code == 503 and r.json()["error"]["code"] == "too_many_streams"
                assert "Retry-After" in r.headers
                # Plain transcriptions do not count against the stream limit.
                plain = http.post(srv.url + URL, files={"file": ("s.wav", SPEECH.read_bytes(), "audio/wav")})
                assert plain.status_code == 200
        assert srv.metric("parakeet_streams_refused_total", {"kind": "sse"}) == 1
        wait_for(lambda: srv.metric("parakeet_live_streams", {"kind": "sse"}) == 0, "the held stream to end")
        assert stream_events(srv, SPEECH)[-1].type == "transcript.text.done"


# ---- request fields ----------------------------------------------------------------------------

def post(srv, **data):
    return httpx.post(srv.url + URL, files={"file": ("s.wav", (AUDIO / "short_1s_16k.wav").read_bytes(), "audio/wav")},
                      data=data, timeout=WAIT_SEC)


@pytest.mark.parametrize("data,param", [
    ({"temperature": "hot"}, "temperature"),
    ({"temperature": "1.5"}, "temperature"),
    ({"temperature": "nan"}, "temperature"),
    ({"language": "english"}, "language"),
    ({"model": ""}, "model"),
    ({"response_format": "diarized_json"}, "response_format"),
    ({"timestamp_granularities[]": "word"}, "timestamp_granularities"),  # needs verbose_json
    ({"stream": "maybe"}, "stream"),
    ({"stream": "true", "response_format": "srt"}, "stream"),
    ({"include[]": "logprobs"}, "include"),
    ({"include[]": "everything"}, "include"),
    ({"chunking_strategy": "manual"}, "chunking_strategy"),
    ({"chunking_strategy[type]": "client_vad"}, "chunking_strategy"),
    ({"chunking_strategy[type]": "server_vad", "chunking_strategy[threshold]": "2"}, "chunking_strategy"),
    ({"chunking_strategy[type]": "server_vad", "chunking_strategy[silence]": "2"}, "chunking_strategy"),
    ({"keywords[]": "parakeet"}, "keywords"),
    ({"colour": "blue"}, "colour"),
])
def test_bad_field_values_are_400s_naming_the_field(server, data, param):
    r = post(server, **data)
    assert r.status_code == 400, r.text
    err = r.json()["error"]
    assert err["param"] == param and err["type"] == "invalid_request_error" and err["message"]


@pytest.mark.parametrize("data", [
    {"temperature": "0.3", "language": "en", "prompt": "hi", "model": "whisper-1"},
    {"stream": "false"},
    {"chunking_strategy": "auto"},
    {"chunking_strategy[type]": "server_vad", "chunking_strategy[threshold]": "0.5",
     "chunking_strategy[silence_duration_ms]": "500", "chunking_strategy[prefix_padding_ms]": "300"},
    {"chunking_strategy": '{"type": "server_vad", "threshold": 0.4}'},
    {"response_format": "verbose_json", "timestamp_granularities[]": ["word", "segment"]},
])
def test_documented_values_are_accepted(server, data):
    r = post(server, **data)
    assert r.status_code == 200, r.text


def test_openai_client_sends_fields_the_server_accepts(server):
    with open(AUDIO / "short_1s_16k.wav", "rb") as f:
        out = client(server).audio.transcriptions.create(
            model="whisper-1", file=f, temperature=0.2, language="en",
            chunking_strategy={"type": "server_vad", "threshold": 0.5})
    assert isinstance(out.text, str)
    with open(AUDIO / "short_1s_16k.wav", "rb") as f, pytest.raises(openai.BadRequestError) as err:
        client(server).audio.transcriptions.create(model="whisper-1", file=f, include=["logprobs"])
    assert err.value.body["param"] == "include"


def test_server_vad_chunking_cuts_the_upload_at_the_vads_pauses(server):
    """chunking_strategy server_vad transcribes the speech segments only: the answer is
    Context.transcribe(vad=) with the Silero options the OpenAI settings map to (threshold,
    min_pause = silence_duration_ms, speech_pad = prefix_padding_ms)."""
    from parakeet_py import Vad
    from parakeet_py.vad import default_model

    settings = {"type": "server_vad", "threshold": 0.6, "silence_duration_ms": 200, "prefix_padding_ms": 100}
    with open(SPEECH, "rb") as f:
        out = openai.OpenAI(base_url=server.url + "/v1", api_key="unused").audio.transcriptions.create(
            model="whisper-1", file=f, response_format="verbose_json", timestamp_granularities=["word"],
            chunking_strategy=settings)
    with Context(MODEL) as ctx, Vad(default_model()) as vad:
        want = ctx.transcribe(SPEECH, vad=vad, vad_options={"threshold": 0.6, "min_pause": 0.2, "speech_pad": 0.1})
        whole = ctx.transcribe(SPEECH)
        segments = vad.segments(load_audio(SPEECH), 16000, threshold=0.6, min_pause=0.2, speech_pad=0.1)
    assert len(segments) > 1  # the cut is not the whole file
    assert out.text == want.text != whole.text
    assert [w.word for w in out.words] == [w.text for w in want.words]
    assert [w.start for w in out.words] == pytest.approx([w.start for w in want.words], abs=0.01)
