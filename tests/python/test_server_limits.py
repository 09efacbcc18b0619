"""parakeet-server's request limits and cancellation: the upload-size and audio-duration
limits (flags and environment variables), advertised by /health and /v1/models, enforced with
413 and an OpenAI-style error body before the model runs; and a request whose client
disconnects is cancelled through the progress callback and counted in /metrics."""

import io
import socket
from typing import Dict, Optional

import httpx
import numpy as np
import pytest
import soundfile

from server_helpers import CANCELLABLE, MODEL, ServerProcess, long_wav_bytes, wait_for

URL_PATH = "/v1/audio/transcriptions"
# A hang guard only: the tests wait for events (a counter moved, a backend freed), never for a
# time, so a slow or busy machine only makes them slower. Generous on purpose.

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


def flac_of_silence(seconds: int, rate: int = 8000) -> bytes:
    """A tiny FLAC holding ``seconds`` of silence: long audio in a small upload."""
    buf = io.BytesIO()
    with soundfile.SoundFile(buf, "w", samplerate=rate, channels=1, format="FLAC") as f:
        for _ in range(seconds // 10):
            f.write(np.zeros(10 * rate, dtype=np.int16))
    return buf.getvalue()



@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """Limits from the environment: 0.5 MiB uploads, 60 s of audio."""
    server = ServerProcess([], tmp_path_factory.mktemp("limited"))
    with pytest.MonkeyPatch.context() as mp:  # only the server's start sees them
        mp.setenv("PARAKEET_MAX_UPLOAD_MB", "0.5")
        mp.setenv("PARAKEET_MAX_AUDIO_SECONDS", "60")
        server.__enter__()
    try:
        yield server
    finally:
        server.stop()


def test_limits_are_advertised(limited):
    limits = {"max_upload_bytes": 512 * 1024, "max_audio_seconds": 60.0}
    health = httpx.get(limited.url + "/health").json()
    assert health["status"] == "ok" and health["limits"] == limits and health["attention"] == "auto"
    card = httpx.get(limited.url + "/v1/models").json()["data"][0]
    assert card["limits"] == limits


def assert_413(r, code):
    assert r.status_code == 413, r.text
    err = r.json()["error"]
    assert set(err) == {"message", "type", "param", "code"} and err["code"] == code
    return err


def test_audio_over_the_duration_limit_is_413_before_decoding(limited):
    r = httpx.post(limited.url + URL_PATH, files={"file": ("long.flac", flac_of_silence(70), "audio/flac")},
                   timeout=60)
    err = assert_413(r, "audio_too_long")
    assert "70.0 s long" in err["message"] and "limit is 60 s" in err["message"] and err["param"] == "file"
    assert limited.metric("parakeet_audio_seconds_total") == 0  # the model never ran


def test_audio_within_the_limit_runs(limited):
    r = httpx.post(limited.url + URL_PATH, files={"file": ("ok.flac", flac_of_silence(50), "audio/flac")},
                   timeout=60)
    assert r.status_code == 200, r.text


def test_upload_over_the_size_limit_is_413(limited):
    r = httpx.post(limited.url + URL_PATH, files={"file": ("big.wav", long_wav_bytes(20), "audio/wav")},
                   timeout=60)
    err = assert_413(r, "file_too_large")
    assert f"limit of {512 * 1024} bytes" in err["message"]


def test_duration_check_without_a_server():
    from parakeet_cli.server.app import DECODED_SAMPLES_PER_SECOND, AudioTooLong, BadAudio, check_audio_size

    check_audio_size(60 * 48000, 48000, 2, 60)  # exactly the limit, 48 kHz stereo
    with pytest.raises(AudioTooLong, match="limit is 60 s"):
        check_audio_size(60 * 16000 + 1, 16000, 1, 60)
    with pytest.raises(AudioTooLong, match="channels"):
        check_audio_size(60 * DECODED_SAMPLES_PER_SECOND // 8 + 1, 384000, 8, 60)
    assert issubclass(AudioTooLong, BadAudio)


def multipart_request(url: str, data: bytes, fields: Optional[Dict[str, str]] = None) -> bytes:
    """The raw bytes of a transcription request (so the test can drop the connection itself)."""
    request = httpx.Request("POST", url, files={"file": ("talk.wav", data, "audio/wav")}, data=fields)
    body = request.read()
    head = [f"POST {URL_PATH} HTTP/1.1", f"Host: {request.url.host}:{request.url.port}"]
    head += [f"{k}: {v}" for k, v in request.headers.items() if k.lower() != "host"]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


@pytest.mark.parametrize("fields,vad,flags", CANCELLABLE.values(), ids=CANCELLABLE.keys())
def test_a_client_that_disconnects_cancels_its_request(tmp_path, fields, vad, flags):
    # 10 min under full attention: seconds of compute on the fixture model (any kernel).
    data = long_wav_bytes(600)
    with ServerProcess(["--attention", "full", *flags], tmp_path, vad=vad) as srv:
        sock = socket.create_connection(("127.0.0.1", srv.port))
        try:
            sock.sendall(multipart_request(srv.url + URL_PATH, data, fields))
            wait_for(lambda: srv.metric("parakeet_backends_in_use") == 1, "the request to start")
        finally:
            sock.close()
        # The counter moves only when the progress callback stops the library mid-run, so it
        # says the request was stopped, not run to its end (and no audio was counted as done).
        wait_for(lambda: srv.metric("parakeet_requests_cancelled_total") == 1, "the request to be cancelled")
        wait_for(lambda: srv.metric("parakeet_backends_in_use") == 0, "the backend to be free")
        assert srv.metric("parakeet_audio_seconds_total") == 0
        assert srv.metric("parakeet_requests_total", {"route": URL_PATH, "status": "499"}) == 1
        # The backend serves the next request.
        r = httpx.post(srv.url + URL_PATH, files={"file": ("short.wav", long_wav_bytes(5), "audio/wav")},
                       timeout=60)
        assert r.status_code == 200, r.text
