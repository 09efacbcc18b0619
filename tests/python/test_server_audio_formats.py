"""parakeet-server with the official ``openai`` client on every file kind of av_helpers (M4A, MP4
with video, WebM, Ogg, MP3, MPEG-PS at each rate and channel count), plain and as Server-Sent
Events; the same text as Context.transcribe on the file. Damaged files and formats outside the
upload allowlist are 400 invalid_audio."""

import io

import httpx
import numpy as np
import openai
import pytest
import soundfile

from av_helpers import CASES, KINDS, encode
from server_helpers import MODEL, ServerProcess
from parakeet_py import Context

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with ServerProcess([], tmp_path_factory.mktemp("formats")) as srv:
        yield srv


@pytest.fixture(scope="module")
def files():
    return {case: encode(*case) for case in CASES}


@pytest.fixture(scope="module")
def direct(files):
    with Context(MODEL) as ctx:
        return {case: ctx.transcribe(data).text for case, data in files.items()}


def client(server):
    return openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c)))
def test_openai_client_transcribes_each_format(server, files, direct, case):
    name = case[0]
    upload = (f"recording.{name}", files[case], KINDS[name].mime)
    out = client(server).audio.transcriptions.create(model=MODEL.name, file=upload)
    assert out.text == direct[case]


@pytest.mark.parametrize("name", ["m4a", "webm", "mp4"])
def test_server_sent_events_take_the_formats_too(server, files, direct, name):
    case = (name, 48000, 1)
    r = httpx.post(server.url + "/v1/audio/transcriptions", data={"stream": "true"},
                   files={"file": (f"a.{name}", files[case], KINDS[name].mime)}, timeout=120)
    assert r.status_code == 200, r.text
    assert "transcript.text.done" in r.text


@pytest.mark.parametrize("name", ["m4a", "mp4", "webm", "ogg", "mp3"])
def test_damaged_uploads_are_400(server, files, name):
    data = files[(name, 48000, 2 if 2 in KINDS[name].channels else 1)]
    for damaged in (data[:len(data) // 2], data[:int(len(data) * 0.9)]):
        with pytest.raises(openai.BadRequestError) as e:
            client(server).audio.transcriptions.create(model=MODEL.name, file=(f"cut.{name}", damaged))
        assert e.value.code == "invalid_audio"


def test_formats_outside_the_allowlist_are_400(server):
    aiff = io.BytesIO()
    soundfile.write(aiff, np.zeros(16000, np.int16), 16000, format="AIFF")
    amr = b"#!AMR\n" + b"\x3c" + b"\x00" * 31
    for name, data in (("a.aiff", aiff.getvalue()), ("a.amr", amr)):
        with pytest.raises(openai.BadRequestError) as e:
            client(server).audio.transcriptions.create(model=MODEL.name, file=(name, data))
        assert e.value.code == "invalid_audio" and "supported: WAV" in e.value.message
