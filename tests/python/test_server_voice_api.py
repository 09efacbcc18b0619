"""LocalAI's voice endpoints on ``parakeet-server --speaker-model E --voices R``, on 127.0.0.1:
/v1/voice/embed gives the encoder's embedding of the audio (equal to SpeakerEncoder.embed),
/v1/voice/verify the cosine distance of two voices against the threshold, /v1/voice/identify the
registry's name; base64 and data: URIs are read, URLs and bad bodies are refused with 400s, and a
server without the models says what it needs."""

import base64

import httpx
import numpy as np
import pytest

from parakeet_py import SpeakerEncoder, VoiceRegistry
from server_helpers import ServerProcess
from voice_helpers import CLIP, ENCODER

DATA = CLIP.parents[1]
SPEECH = DATA / "audio" / "speech_16k.wav"
OTHER = DATA / "audio" / "conversation_16k.wav"


def b64(path):
    return base64.b64encode(path.read_bytes()).decode()


@pytest.fixture(scope="module")
def encoder():
    with SpeakerEncoder(ENCODER) as enc:
        yield enc


@pytest.fixture(scope="module")
def server(tmp_path_factory, encoder):
    folder = tmp_path_factory.mktemp("voice-api")
    registry = VoiceRegistry()
    registry.enroll("Ada", SPEECH, encoder)
    registry.save(folder / "voices.pksr")
    args = ["--speaker-model", str(ENCODER), "--voices", str(folder / "voices.pksr"), "--max-audio-seconds", "40"]
    with ServerProcess(args, folder) as srv:
        yield srv


def call(srv, path, body, key=None):
    return httpx.post(srv.url + "/v1/voice/" + path, json=body, timeout=60,
                      headers={"Authorization": f"Bearer {key}"} if key else {})


def test_embed_is_the_encoders_embedding(server, encoder):
    r = call(server, "embed", {"model": "ignored", "audio": b64(SPEECH)})
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["dim"] == 192 == len(body["embedding"]) and body["model"] == encoder.identity
    np.testing.assert_allclose(body["embedding"], encoder.embed(SPEECH), atol=1e-6)
    # A data: URI carries the same file.
    r = call(server, "embed", {"audio": "data:audio/wav;base64," + b64(SPEECH)})
    assert r.json()["embedding"] == body["embedding"]


def test_verify_compares_the_cosine_distance_with_the_threshold(server, encoder):
    r = call(server, "verify", {"audio1": b64(SPEECH), "audio2": b64(SPEECH)})
    assert r.status_code == 200, r.text
    same = r.json()
    assert same["verified"] is True and same["distance"] == pytest.approx(0.0, abs=1e-5)
    assert same["threshold"] == 0.5 and same["confidence"] == pytest.approx(100.0, abs=1e-3)
    assert same["model"] == encoder.identity and same["processing_time_ms"] >= 0
    distance = 1.0 - float(encoder.embed(SPEECH) @ encoder.embed(OTHER))
    assert distance > 1e-3  # the random fixture network puts any two clips close, but not together
    other = call(server, "verify", {"audio1": b64(SPEECH), "audio2": b64(OTHER), "threshold": distance / 2}).json()
    assert other["verified"] is False and other["distance"] == pytest.approx(distance, abs=1e-5)
    assert other["confidence"] == 0.0 and other["threshold"] == pytest.approx(distance / 2)
    loose = call(server, "verify", {"audio1": b64(SPEECH), "audio2": b64(OTHER), "threshold": distance * 2}).json()
    assert loose["verified"] is True and loose["confidence"] == pytest.approx(50.0, abs=0.01)


def test_identify_names_the_enrolled_voice(server):
    r = call(server, "identify", {"audio": b64(SPEECH)})
    assert r.status_code == 200, r.text
    (match,) = r.json()["matches"]
    assert match["name"] == match["id"] == "Ada" and match["match"] is True
    assert match["distance"] == pytest.approx(0.0, abs=1e-5)


@pytest.mark.parametrize("path, body, param, message", [
    ("embed", {}, "audio", "audio is required"),
    ("embed", {"audio": "https://example.com/a.wav"}, "audio", "fetches no URLs"),
    ("embed", {"audio": "not base64!"}, "audio", "not valid base64"),
    ("embed", {"audio": "data:audio/wav,abc"}, "audio", "must be base64"),
    ("embed", {"audio": base64.b64encode(b"not audio").decode()}, "audio", "could not read 'audio' as audio"),
    ("verify", {"audio1": b64(SPEECH)}, "audio2", "audio2 is required"),
    ("verify", {"audio1": b64(SPEECH), "audio2": b64(SPEECH), "threshold": "x"}, "threshold", "must be a number"),
    ("verify", {"audio1": b64(SPEECH), "audio2": b64(SPEECH), "anti_spoofing": True}, "anti_spoofing",
     "anti_spoofing is not supported"),
])
def test_bad_requests_are_400s_that_name_the_field(server, path, body, param, message):
    r = call(server, path, body)
    assert r.status_code == 400, r.text
    assert r.json()["error"]["param"] == param and message in r.json()["error"]["message"]


def test_a_body_that_is_not_a_json_object(server):
    r = httpx.post(server.url + "/v1/voice/embed", content=b"[1]", timeout=10)
    assert r.status_code == 400 and r.json()["error"]["code"] == "invalid_json"


def test_too_little_audio_is_the_encoders_error(server, tmp_path):
    import soundfile as sf

    sf.write(tmp_path / "blip.wav", np.zeros(400, np.float32), 16000)
    r = call(server, "embed", {"audio": b64(tmp_path / "blip.wav")})
    assert r.status_code == 400 and "too little audio" in r.json()["error"]["message"]


def test_a_server_without_the_models_says_what_it_needs_and_the_key_is_asked(tmp_path):
    with ServerProcess([], tmp_path) as plain:
        r = call(plain, "embed", {"audio": b64(SPEECH)})
        assert r.status_code == 400 and "needs a server started with --speaker-model" in r.json()["error"]["message"]
    with ServerProcess(["--speaker-model", str(ENCODER), "--api-key", "k"], tmp_path) as no_registry:
        assert call(no_registry, "embed", {"audio": b64(SPEECH)}).status_code == 401
        assert call(no_registry, "embed", {"audio": b64(SPEECH)}, key="k").status_code == 200
        assert call(no_registry, "identify", {"audio": b64(SPEECH)}).status_code == 401
        r = call(no_registry, "identify", {"audio": b64(SPEECH)}, key="k")
        assert r.status_code == 400 and "needs a server started with --voices" in r.json()["error"]["message"]
