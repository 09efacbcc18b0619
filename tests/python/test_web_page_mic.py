"""``#mic`` of the page at ``/``, in headless Chromium whose fake microphone loops a clip of the
fixture speech between silences (browser_helpers.py). The page, with the API key (sent as a
WebSocket subprotocol), streams the microphone over /v1/realtime with the server's server_vad
turns (or, on a server without a VAD, one turn its stop commits); the test records what the
page sends and checks that:

* the audio it appends is the clip at the rate its session.update declares;
* the turns' final text it shows is what the server's realtime API answers when the same events
  are sent to it again by a plain WebSocket client;
* the page's worklet and WebSocket raise no Content-Security-Policy violation.
"""

import base64
import json

import numpy as np
import pytest
import soundfile as sf
import soxr
from selenium.webdriver.common.by import By
from websockets.sync.client import connect

from browser_helpers import API_KEY, chromium, console, page_server, wait_until
from stream_helpers import SPEECH, per_test_limit

_bounded = per_test_limit(240)
RATE = 16000
# Records every message the page sends on its WebSockets (Selenium's scripts are not subject
# to the page's CSP).
RECORD_SENDS = """
window.sent = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) { window.sent.push(data); return send.call(this, data); };
"""
# Ends the replay: the error the server answers an unknown event with carries its event_id.
REPLAY_END = {"type": "replay.end", "event_id": "replay_end"}
APPEND_SECONDS = 0.1  # the page's worklet sends 100 ms at a time
PIECE_SECONDS = 0.5  # the clip's speech is found in the audio sent in pieces this long
WAIT_SEC = 120


@pytest.fixture(scope="module")
def clip(tmp_path_factory):
    """0.5 s of silence, the fixture speech up to its first pause (2.9 s), 1.5 s of silence: the
    fake microphone loops it, so every loop is one server_vad turn."""
    speech, rate = sf.read(str(SPEECH), dtype="float32")
    assert rate == RATE
    audio = np.concatenate([np.zeros(RATE // 2, np.float32), speech[:int(2.9 * RATE)],
                            np.zeros(3 * RATE // 2, np.float32)])
    path = tmp_path_factory.mktemp("mic") / "clip.wav"
    sf.write(path, audio, RATE, subtype="PCM_16")
    return path, audio


@pytest.fixture(scope="module", params=[None, "none"], ids=["server_vad", "no_vad"])
def server(request, tmp_path_factory):
    """A server with the package's VAD (server_vad turns), and one without (no turn detection:
    the page's stop commits the one turn)."""
    with page_server(tmp_path_factory.mktemp("page_mic"), vad=request.param) as srv:
        srv.turns = request.param is None
        yield srv


def best_match(recorded: np.ndarray, template: np.ndarray) -> float:
    """The highest normalized cross-correlation of ``template`` at any offset in ``recorded``
    (a stretch of ``recorded`` far quieter than the template counts as that quiet: its
    rounding errors over its own tiny energy would be noise, not a match)."""
    n = recorded.size + template.size
    size = 1 << (n - 1).bit_length()
    corr = np.fft.irfft(np.fft.rfft(recorded, size) * np.conj(np.fft.rfft(template, size)), size)
    corr = corr[:recorded.size - template.size + 1]
    energy = np.concatenate([[0.0], np.cumsum(recorded.astype(np.float64) ** 2)])
    local = np.sqrt(energy[template.size:] - energy[:-template.size])
    norm = np.linalg.norm(template)
    return float(np.max(corr / (norm * np.maximum(local, norm / 4))))


def replay(server, events):
    """The completed transcripts the server's realtime API answers to ``events``."""
    url = server.url.replace("http://", "ws://") + "/v1/realtime?intent=transcription"
    texts = []
    with connect(url, additional_headers={"Authorization": f"Bearer {API_KEY}"}, open_timeout=WAIT_SEC,
                 max_size=None) as ws:
        for event in [*events, REPLAY_END]:
            ws.send(json.dumps(event))
        while True:
            event = json.loads(ws.recv(timeout=WAIT_SEC))
            if event["type"] == "conversation.item.input_audio_transcription.completed":
                texts.append(event["transcript"])
            elif event["type"] == "error" and event["error"]["event_id"] == REPLAY_END["event_id"]:
                return texts


def test_microphone_shows_the_realtime_apis_turns(server, clip, tmp_path):
    path, audio = clip
    with chromium(tmp_path, fake_audio=path) as browser:
        browser.get(server.url + "/")
        browser.execute_script(RECORD_SENDS)
        browser.find_element(By.ID, "api-key").send_keys(API_KEY)
        mic, transcript = browser.find_element(By.ID, "mic"), browser.find_element(By.ID, "transcript")
        status = browser.find_element(By.ID, "status")

        def failed():
            return "error" in status.get_attribute("class")

        mic.click()
        # At least one whole loop of the clip heard, whatever its phase at the start: two turns,
        # or without turn detection, a loop and a half of appends.
        if server.turns:
            wait_until(browser, lambda d: failed() or len(transcript.find_elements(By.CSS_SELECTOR, "p.final")) >= 2,
                       "two turns")
        else:
            appends = int(1.5 * audio.size / RATE / APPEND_SECONDS)
            wait_until(browser, lambda d: failed() or d.execute_script("return window.sent.length") > appends,
                       "the audio")
        assert not failed(), status.text
        mic.click()
        wait_until(browser, lambda d: mic.get_attribute("aria-pressed") == "false", "the session's end")
        assert not failed(), status.text
        shown = [p.get_attribute("textContent") for p in transcript.find_elements(By.CSS_SELECTOR, "p.final")]
        assert not transcript.find_elements(By.CSS_SELECTOR, "p.partial")
        assert server.turns or len(shown) == 1
        sent = [json.loads(m) for m in browser.execute_script("return window.sent")]
        assert not [m for m in console(browser) if "Content Security Policy" in m]  # the worklet, the socket

    update = next(e for e in sent if e["type"] == "session.update")
    rate = update["session"]["audio"]["input"]["format"]["rate"]
    pcm = b"".join(base64.b64decode(e["audio"]) for e in sent if e["type"] == "input_audio_buffer.append")
    recorded = np.frombuffer(pcm, "<i2").astype(np.float32) / 32768
    speech = soxr.resample(audio, RATE, rate)[int(0.5 * rate):int(3.4 * rate)]
    # piece by piece: a loaded machine may drop a few ms of a fake device's audio now and then
    piece = int(PIECE_SECONDS * rate)
    matches = [best_match(recorded, speech[i:i + piece]) for i in range(0, speech.size - piece + 1, piece)]
    assert np.median(matches) > 0.9, f"the audio sent is not the clip at {rate} Hz (best correlations {matches})"

    assert shown == [t for t in replay(server, sent) if t.strip()]
