"""``parakeet-server`` over HTTP: every endpoint and response format, the official OpenAI
client, API keys, and bad uploads (which must get a 4xx JSON error, never a 500)."""

import io
import re
import socket

import httpx
import openai
import pytest

from parakeet_cli import subtitles
from parakeet_py import Context
from server_helpers import AUDIO, CLIPS, MODEL, ServerProcess

SPEECH = AUDIO / "speech_16k.wav"
KEY = "test-key-123"


@pytest.fixture(scope="module")
def direct():
    """Transcripts of every clip by an in-process Context: what the server must return."""
    with Context(MODEL) as ctx:
        return {clip.name: ctx.transcribe(clip) for clip in CLIPS}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess(["--concurrency", "2"], tmp_path_factory.mktemp("server")) as srv:
        yield srv


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """A server with an API key and a 0.25 MiB upload limit."""
    with ServerProcess(["--api-key", KEY, "--max-upload-mb", "0.25"], tmp_path_factory.mktemp("locked")) as srv:
        yield srv


def post(srv, files=None, data=None, headers=None, **kw):
    return httpx.post(srv.url + "/v1/audio/transcriptions", files=files, data=data, headers=headers,
                      timeout=60, **kw)


def upload(path, **data):
    return {"files": {"file": (path.name, path.read_bytes(), "audio/wav")}, "data": data}


def assert_error(r, status, code=None, param=None):
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"}
    assert isinstance(err["message"], str) and err["message"]
    if code is not None:
        assert err["code"] == code, err
    if param is not None:
        assert err["param"] == param, err
    return err


# ---- simple endpoints --------------------------------------------------------------------

def test_health(server):
    r = httpx.get(server.url + "/health")
    assert r.status_code == 200 and r.json()["status"] == "ok"
    assert r.json()["limits"] == {"max_upload_bytes": 25 * 1024 * 1024, "max_audio_seconds": 3600.0}


def test_models_lists_the_model_file_name(server):
    r = httpx.get(server.url + "/v1/models")
    assert r.status_code == 200
    body = r.json()
    assert body["object"] == "list" and len(body["data"]) == 1
    card = body["data"][0]
    assert card["id"] == MODEL.name and card["object"] == "model"
    assert isinstance(card["created"], int) and card["owned_by"]
    assert httpx.get(server.url + f"/v1/models/{MODEL.name}").json() == card
    assert_error(httpx.get(server.url + "/v1/models/whisper-1"), 404, code="model_not_found")


def test_unknown_path_and_method_are_json_errors(server):
    assert_error(httpx.get(server.url + "/v1/nothing"), 404)
    assert_error(httpx.get(server.url + "/v1/audio/transcriptions"), 405)


# ---- response formats --------------------------------------------------------------------

@pytest.mark.parametrize("clip", CLIPS, ids=lambda p: p.name)
def test_json_text_matches_direct_transcription(server, direct, clip):
    r = post(server, **upload(clip, model="anything"))
    assert r.status_code == 200, r.text
    assert r.json() == {"text": direct[clip.name].text}


def test_default_format_is_json_and_ignored_fields_are_accepted(server, direct):
    r = post(server, **upload(SPEECH, model="whisper-1", language="en", prompt="hello", temperature="0.7"))
    assert r.status_code == 200 and r.json() == {"text": direct[SPEECH.name].text}


def test_text_format(server, direct):
    r = post(server, **upload(SPEECH, response_format="text"))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert r.text == direct[SPEECH.name].text + "\n"


def test_verbose_json_with_words_and_segments(server, direct):
    t = direct[SPEECH.name]
    files = {"file": (SPEECH.name, SPEECH.read_bytes(), "audio/wav")}
    data = {"response_format": "verbose_json", "timestamp_granularities[]": ["word", "segment"], "language": "en"}
    r = post(server, files=files, data=data)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["task"] == "transcribe" and body["language"] == "en"
    assert body["text"] == t.text and body["duration"] == pytest.approx(t.duration, abs=1e-3)
    assert [w["word"] for w in body["words"]] == [w.text for w in t.words]
    for got, want in zip(body["words"], t.words):
        assert set(got) == {"word", "start", "end"}
        assert got["start"] == pytest.approx(want.start, abs=1e-3) and got["end"] == pytest.approx(want.end, abs=1e-3)
    segs = body["segments"]
    assert segs and [s["id"] for s in segs] == list(range(len(segs)))
    assert " ".join(s["text"] for s in segs) == " ".join(w.text for w in t.words)
    assert sum(len(s["tokens"]) for s in segs) == len(t.tokens)
    for s in segs:
        assert s["start"] <= s["end"] and s["seek"] == 0 and s["temperature"] == 0.0
        assert s["avg_logprob"] <= 0 and s["compression_ratio"] > 0 and s["no_speech_prob"] is None


def test_verbose_json_granularities(server):
    def body(granularities):
        files = {"file": (SPEECH.name, SPEECH.read_bytes(), "audio/wav")}
        data = {"response_format": "verbose_json", "timestamp_granularities[]": granularities}
        r = post(server, files=files, data=data)
        assert r.status_code == 200, r.text
        return r.json()

    default = body([])  # OpenAI's default: segments only
    assert "segments" in default and "words" not in default and default["language"] is None
    words_only = body(["word"])
    assert "words" in words_only and "segments" not in words_only
    segments_only = body(["segment"])
    assert "segments" in segments_only and "words" not in segments_only


def parse_cues(text, sep):
    """(start, end, text) of each cue of an SRT/VTT document (a cue's lines joined by spaces)."""
    clock = rf"(\d\d):(\d\d):(\d\d){re.escape(sep)}(\d\d\d)"
    cues = []
    for m in re.finditer(rf"{clock} --> {clock}\n((?:.+\n)+)", text):
        g = [int(x) for x in m.groups()[:8]]
        start = g[0] * 3600 + g[1] * 60 + g[2] + g[3] / 1000
        end = g[4] * 3600 + g[5] * 60 + g[6] + g[7] / 1000
        cues.append((start, end, " ".join(m.group(9).splitlines())))
    return cues


def test_srt(server, direct):
    t = direct[SPEECH.name]
    r = post(server, **upload(SPEECH, response_format="srt"))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    cues = parse_cues(r.text, ",")
    assert cues and " ".join(c[2] for c in cues) == " ".join(w.text for w in t.words)
    numbers = re.findall(r"^(\d+)\n\d\d:", r.text, flags=re.M)
    assert numbers == [str(i) for i in range(1, len(cues) + 1)]
    assert all(a[0] <= a[1] <= b[0] for a, b in zip(cues, cues[1:]))
    assert r.text == subtitles.to_srt(t.words)  # the CLI's subtitles


def test_vtt(server, direct):
    t = direct[SPEECH.name]
    r = post(server, **upload(SPEECH, response_format="vtt"))
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/vtt")
    assert r.text.startswith("WEBVTT\n\n")
    assert r.text == subtitles.to_vtt(t.words)  # the CLI's subtitles
    cues = parse_cues(r.text, ".")
    assert cues and " ".join(c[2] for c in cues) == " ".join(w.text for w in t.words)


def test_other_formats_and_rates_are_decoded(server, direct, tmp_path):
    # FLAC of the 44.1 kHz stereo clip: decoded by libsndfile, mixed down and resampled,
    # the same path the in-process binding takes.
    import soundfile

    data, rate = soundfile.read(AUDIO / "speech_44k_stereo.wav", dtype="int16")
    flac = tmp_path / "stereo.flac"
    soundfile.write(flac, data, rate, format="FLAC")
    r = post(server, files={"file": ("stereo.flac", flac.read_bytes(), "audio/flac")})
    assert r.status_code == 200, r.text
    with Context(MODEL) as ctx:
        assert r.json()["text"] == ctx.transcribe(flac).text


# ---- the official OpenAI client -----------------------------------------------------------

def test_openai_client(server, direct):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    assert [m.id for m in client.models.list()] == [MODEL.name]
    want = direct[SPEECH.name]
    with open(SPEECH, "rb") as f:
        assert client.audio.transcriptions.create(model=MODEL.name, file=f).text == want.text
    with open(SPEECH, "rb") as f:
        verbose = client.audio.transcriptions.create(model=MODEL.name, file=f, response_format="verbose_json",
                                                     timestamp_granularities=["word", "segment"])
    assert verbose.text == want.text and verbose.duration == pytest.approx(want.duration, abs=1e-3)
    assert [w.word for w in verbose.words] == [w.text for w in want.words]
    assert verbose.segments and verbose.segments[0].start == pytest.approx(want.words[0].start, abs=1e-3)
    for fmt in ("text", "srt", "vtt"):
        with open(SPEECH, "rb") as f:
            out = client.audio.transcriptions.create(model=MODEL.name, file=f, response_format=fmt)
        assert isinstance(out, str) and want.text.split()[0] in out


def test_openai_client_sees_errors(server):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    with pytest.raises(openai.BadRequestError) as e:
        client.audio.transcriptions.create(model="x", file=("notes.txt", b"this is not audio"))
    assert e.value.status_code == 400 and e.value.code == "invalid_audio"


# ---- bad input ---------------------------------------------------------------------------

def test_not_audio(server):
    r = post(server, files={"file": ("notes.txt", b"hello, this is plain text\n" * 50, "text/plain")})
    assert_error(r, 400, code="invalid_audio", param="file")


def test_truncated_wav(server):
    r = post(server, files={"file": ("cut.wav", SPEECH.read_bytes()[:30], "audio/wav")})
    assert_error(r, 400, code="invalid_audio")


def test_empty_file(server):
    assert_error(post(server, files={"file": ("empty.wav", b"", "audio/wav")}), 400, code="empty_file")


def test_missing_file_field(server):
    assert_error(post(server, files={"audio": ("a.wav", SPEECH.read_bytes(), "audio/wav")}), 400,
                 code="missing_file", param="file")
    assert_error(post(server, data={"model": "x"}, files={"dummy": ("", b"", "text/plain")}), 400)
    assert_error(post(server, data={"file": "speech.wav"}, files={"x": ("x", b"", "text/plain")}), 400,
                 param="file")


def test_not_multipart(server):
    r = httpx.post(server.url + "/v1/audio/transcriptions", json={"file": "speech.wav"})
    assert_error(r, 415, code="unsupported_media_type")
    r = httpx.post(server.url + "/v1/audio/transcriptions", content=SPEECH.read_bytes(),
                   headers={"content-type": "audio/wav"})
    assert_error(r, 415)


def test_malformed_multipart(server):
    headers = {"content-type": "multipart/form-data; boundary=XYZ"}
    assert_error(post(server, content=b"--XYZ\r\ngarbage without headers\r\n\r\n", headers=headers), 400)
    assert_error(post(server, content=b"abc", headers={"content-type": "multipart/form-data"}), 400)


@pytest.mark.parametrize("field,value,param", [
    ("response_format", "mp3", "response_format"),
    ("timestamp_granularities[]", "sentence", "timestamp_granularities"),
    ("stream", "maybe", "stream"),
])
def test_unsupported_option_values(server, field, value, param):
    assert_error(post(server, **upload(SPEECH, **{field: value})), 400, param=param)


@pytest.mark.parametrize("field,value", [
    ("beam_size", "9" * 5000),  # int() refuses over 4300 digits: was a 500
    ("chunking_strategy", "[" * 5000 + "]" * 5000),  # json.loads' RecursionError: was a 500
], ids=["5000-digit beam_size", "deeply nested chunking_strategy"])
def test_hostile_field_values_are_400_not_500(server, field, value):
    assert_error(post(server, **upload(SPEECH, **{field: value})), 400, param=field)


def test_nan_samples_are_refused(server, tmp_path):
    import numpy as np
    import soundfile

    samples = np.zeros(16000, dtype=np.float32)
    samples[100] = np.nan
    path = tmp_path / "nan.wav"
    soundfile.write(path, samples, 16000, subtype="FLOAT")
    assert_error(post(server, **upload(path)), 400, code="invalid_audio")


def test_long_audio_is_refused_before_decoding(server):
    # 3700 s of silence in a small FLAC: refused from its header (over the default 3600 s limit).
    import numpy as np
    import soundfile

    buf = io.BytesIO()
    with soundfile.SoundFile(buf, "w", samplerate=8000, channels=1, format="FLAC") as f:
        for _ in range(37):
            f.write(np.zeros(800_000, dtype=np.int16))
    err = assert_error(post(server, files={"file": ("long.flac", buf.getvalue(), "audio/flac")}), 413,
                       code="audio_too_long")
    assert "3600" in err["message"]


def test_file_where_text_is_expected(server):
    files = [("file", ("a.wav", SPEECH.read_bytes(), "audio/wav")),
             ("response_format", ("f.txt", b"json", "text/plain"))]
    assert_error(post(server, files=files), 400)  # one file per request
    files = [("response_format", ("f.txt", b"json", "text/plain"))]
    assert_error(post(server, files=files, data={"x": "1"}), 400, param="response_format")


def test_server_is_healthy_after_bad_input(server, direct):
    assert httpx.get(server.url + "/health").status_code == 200
    assert post(server, **upload(SPEECH)).json() == {"text": direct[SPEECH.name].text}
    assert server.metric("parakeet_requests_total", {"status": "500"}) == 0


# ---- API key and upload limit -------------------------------------------------------------

def test_api_key_required(locked):
    small = AUDIO / "short_1s_16k.wav"
    assert_error(post(locked, **upload(small)), 401, code="missing_api_key")
    r = post(locked, **upload(small), headers={"Authorization": "Bearer wrong"})
    assert_error(r, 401, code="invalid_api_key")
    assert r.headers["www-authenticate"] == "Bearer"
    assert post(locked, **upload(small), headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    assert_error(httpx.get(locked.url + "/v1/models"), 401)
    assert httpx.get(locked.url + "/v1/models", headers={"Authorization": f"Bearer {KEY}"}).status_code == 200
    # Health and metrics stay open for probes and scrapers.
    assert httpx.get(locked.url + "/health").status_code == 200
    assert httpx.get(locked.url + "/metrics").status_code == 200


def test_api_key_with_openai_client(locked):
    small = AUDIO / "short_1s_16k.wav"
    good = openai.OpenAI(base_url=locked.url + "/v1", api_key=KEY, max_retries=0)
    with open(small, "rb") as f:
        assert isinstance(good.audio.transcriptions.create(model="m", file=f).text, str)
    bad = openai.OpenAI(base_url=locked.url + "/v1", api_key="nope", max_retries=0)
    with pytest.raises(openai.AuthenticationError):
        with open(small, "rb") as f:
            bad.audio.transcriptions.create(model="m", file=f)


def test_upload_too_large(locked):
    auth = {"Authorization": f"Bearer {KEY}"}
    big = AUDIO / "long_30s_16k.wav"  # ~0.9 MiB > 0.25 MiB
    r = post(locked, **upload(big), headers=auth)
    assert "0.25 MiB" in assert_error(r, 413, code="file_too_large")["message"]
    # Without Content-Length (chunked), the limit is enforced while the body streams in.
    payload = big.read_bytes()
    boundary = "b0undary"
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"big.wav\"\r\n"
            "Content-Type: audio/wav\r\n\r\n").encode()
    tail = f"\r\n--{boundary}--\r\n".encode()

    def chunks():
        yield head
        for i in range(0, len(payload), 65536):
            yield payload[i:i + 65536]
        yield tail

    r = post(locked, content=chunks(), headers={**auth, "content-type": f"multipart/form-data; boundary={boundary}"})
    assert "0.25 MiB" in assert_error(r, 413, code="file_too_large")["message"]
    # Just under the limit passes.
    small = AUDIO / "short_1s_16k.wav"
    assert post(locked, **upload(small), headers=auth).status_code == 200
    assert httpx.get(locked.url + "/health").status_code == 200


def test_unauthorized_large_upload_is_answered(locked):
    # The 401 is decided before the body is read; the client still gets it after sending all.
    r = post(locked, **upload(AUDIO / "long_30s_16k.wav"))
    assert_error(r, 401)


def raw_request_head(srv, extra_headers):
    head = (f"POST /v1/audio/transcriptions HTTP/1.1\r\nHost: 127.0.0.1:{srv.port}\r\n"
            f"Authorization: Bearer {KEY}\r\nContent-Type: multipart/form-data; boundary=B\r\n"
            f"{extra_headers}\r\n")
    part = b'--B\r\nContent-Disposition: form-data; name="file"; filename="x.wav"\r\n\r\n'
    return head.encode(), part


def read_status(sock):
    sock.settimeout(10)
    data = b""
    while b"\r\n" not in data:
        chunk = sock.recv(4096)
        if not chunk:
            break
        data += chunk
    return data.split(b"\r\n", 1)[0].decode()


def test_upload_limit_is_enforced_while_the_body_streams(locked):
    # A chunked body that passes the limit and then stalls, unfinished: the server must answer
    # 413 from what it has read so far instead of waiting for (and buffering) the whole body.
    head, part = raw_request_head(locked, "Transfer-Encoding: chunked\r\n")
    with socket.create_connection(("127.0.0.1", locked.port), timeout=10) as sock:
        sock.sendall(head)
        block = b"\0" * 65536
        for data in [part] + [block] * 8:  # 0.5 MiB > 0.25 MiB
            sock.sendall(b"%x\r\n" % len(data) + data + b"\r\n")
        assert read_status(sock) == "HTTP/1.1 413 Request Entity Too Large"


def test_declared_oversize_body_is_refused_before_it_is_sent(locked):
    head, part = raw_request_head(locked, f"Content-Length: {10 ** 10}\r\n")
    with socket.create_connection(("127.0.0.1", locked.port), timeout=10) as sock:
        sock.sendall(head + part)
        assert read_status(sock) == "HTTP/1.1 413 Request Entity Too Large"
    assert httpx.get(locked.url + "/health").status_code == 200


# ---- metrics -----------------------------------------------------------------------------

def test_metrics(server):
    before = server.metric("parakeet_requests_total", {"route": "/v1/audio/transcriptions", "status": "200"})
    audio_before = server.metric("parakeet_audio_seconds_total")
    for _ in range(2):
        assert post(server, **upload(SPEECH)).status_code == 200
    assert_error(post(server, files={"file": ("x.txt", b"not audio", "text/plain")}), 400)
    r = httpx.get(server.url + "/metrics")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/plain")
    assert server.metric("parakeet_requests_total",
                         {"route": "/v1/audio/transcriptions", "status": "200"}) == before + 2
    assert server.metric("parakeet_requests_total", {"route": "/v1/audio/transcriptions", "status": "400"}) >= 1
    import soundfile

    assert server.metric("parakeet_audio_seconds_total") == pytest.approx(
        audio_before + 2 * soundfile.info(SPEECH).duration, abs=1e-3)
    assert server.metric("parakeet_request_duration_seconds_count", {"route": "/v1/audio/transcriptions"}) >= 3
    assert server.metric("parakeet_backends") == 2
    assert server.metric("parakeet_queue_limit") == 4
    assert "parakeet_queue_depth 0.0" in r.text
    assert "parakeet_backends_in_use 0.0" in r.text
