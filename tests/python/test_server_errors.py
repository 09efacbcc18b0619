"""The server answers a failure by its kind (the library's error code): a caller's mistake is a
4xx, never a 500; the same mapping decides the error events of streams."""

import httpx
import numpy as np
import pytest

from parakeet_cli.server.errors import SERVER_ERROR, AudioTooLong, BadAudio, transcription_error
from parakeet_py import (BadModel, Cancelled, InternalError, InvalidArgument, InvalidAudio, OutOfMemory,
                         ParakeetError, Unsupported)

from data_helpers import CTC_ONLY_MODEL, SPEECH
from server_helpers import long_wav_bytes

URL_PATH = "/v1/audio/transcriptions"


@pytest.mark.parametrize("error,status,code", [
    (AudioTooLong("over the limit"), 413, "audio_too_long"),
    (BadAudio("not audio"), 400, "invalid_audio"),
    (InvalidAudio("sample 3 is not a finite number"), 400, "invalid_audio"),
    (InvalidArgument("bad value"), 400, "invalid_value"),
    (Unsupported("this ctc model has no TDT/RNN-T head"), 422, "unsupported_by_model"),
    (Cancelled("cancelled by the progress callback"), 499, "client_disconnected"),
    (OutOfMemory("std::bad_alloc"), 503, "out_of_memory"),
    (InternalError("a bug"), 500, "transcription_failed"),
    (BadModel("the served model broke"), 500, "transcription_failed"),
    (ParakeetError("a code from a newer library", code=42), 500, "transcription_failed"),
])
def test_each_kind_of_failure_has_its_status(error, status, code):
    answer = transcription_error(error)
    assert (answer.status, answer.code) == (status, code)
    # Only the server's own trouble is a server_error; a caller's mistake is an invalid request.
    assert (answer.type == SERVER_ERROR) == (status >= 500)
    if status == 503:
        assert int(answer.headers["Retry-After"]) > 0


def test_beam_size_on_a_ctc_only_model_is_422_not_500(start_server):
    srv = start_server(model=CTC_ONLY_MODEL)
    audio = SPEECH.read_bytes()
    r = httpx.post(srv.url + URL_PATH, files={"file": ("speech.wav", audio, "audio/wav")},
                   data={"beam_size": "2"}, timeout=60)
    assert r.status_code == 422, r.text
    error = r.json()["error"]
    assert error["code"] == "unsupported_by_model" and error["type"] == "invalid_request_error"
    assert "TDT" in error["message"] or "RNN-T" in error["message"]
    # The same file decodes greedily on the same server, which kept running.
    r = httpx.post(srv.url + URL_PATH, files={"file": ("speech.wav", audio, "audio/wav")}, timeout=60)
    assert r.status_code == 200, r.text
    assert srv.metric("parakeet_requests_total", {"route": URL_PATH, "status": "422"}) == 1


def test_bad_audio_is_400_and_long_audio_413(start_server):
    import io

    import soundfile
    srv = start_server(["--max-audio-seconds", "2"])
    nan = io.BytesIO()
    soundfile.write(nan, np.array([0.0, np.nan, 0.0] * 1000, np.float32), 16000, format="WAV", subtype="FLOAT")
    for name, data, status, code in (("nan.wav", nan.getvalue(), 400, "invalid_audio"),
                                     ("noise.wav", b"RIFF....WAVEjunk" * 64, 400, "invalid_audio"),
                                     ("long.wav", long_wav_bytes(3), 413, "audio_too_long")):
        r = httpx.post(srv.url + URL_PATH, files={"file": (name, data, "audio/wav")}, timeout=60)
        assert (r.status_code, r.json()["error"]["code"]) == (status, code), r.text
