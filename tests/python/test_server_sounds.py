"""parakeet-server --sound-model: verbose_json gets the clip's "sound_events" (the
SoundTagger's events of the decoded upload); other formats and servers without it get none."""

import httpx
import pytest

from ced_helpers import MODEL, clip_path
from parakeet_py import SoundTagger, load_audio
from server_helpers import ServerProcess

CLIP = clip_path("long")


def post(srv, **data):
    return httpx.post(srv.url + "/v1/audio/transcriptions", files={"file": ("a.wav", CLIP.read_bytes(), "audio/wav")},
                      data=data, timeout=60)


@pytest.fixture(scope="module")
def expected():
    with SoundTagger(MODEL) as t:
        return t.events(load_audio(str(CLIP), target_rate=16000))


def test_verbose_json_carries_the_sound_events(tmp_path, expected):
    assert expected  # the fixture's clip has events to compare
    with ServerProcess(["--sound-model", str(MODEL)], tmp_path) as srv:
        r = post(srv, response_format="verbose_json")
        assert r.status_code == 200, r.text
        assert r.json()["sound_events"] == expected
        plain = post(srv, response_format="json")
        assert plain.status_code == 200 and "sound_events" not in plain.json()


def test_a_server_without_a_sound_model_adds_none(tmp_path):
    with ServerProcess([], tmp_path) as srv:
        r = post(srv, response_format="verbose_json")
        assert r.status_code == 200 and "sound_events" not in r.json()
