"""``parakeet-server --diarize-model``: response_format=diarized_json in OpenAI's shape (checked
with the installed openai package's TranscriptionDiarized, and through its client), verbose_json
words and srt cues with speakers, all equal to Context.transcribe(diarizer=...); the ASR's
limits and metrics apply; what a server without a diarizer, or beam search, answers."""

import io

import httpx
import numpy as np
import openai
import pytest
import soundfile
from openai.types.audio import TranscriptionDiarized

from data_helpers import NEMO_DIR
from parakeet_py import Context, Diarizer
from server_helpers import AUDIO, MODEL, ServerProcess

DIAR = NEMO_DIR / "sortformer_offline" / "model.gguf"
CLIP = AUDIO / "conversation_16k.wav"  # 14 s


@pytest.fixture(scope="module")
def expected():
    with Context(MODEL) as ctx, Diarizer(DIAR) as d:
        return ctx.transcribe(CLIP, diarizer=d)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    args = ["--diarize-model", str(DIAR), "--concurrency", "2", "--max-audio-seconds", "20"]
    with ServerProcess(args, tmp_path_factory.mktemp("diar")) as srv:
        yield srv


def post(srv, path=CLIP, content=None, **data):
    content = path.read_bytes() if content is None else content
    return httpx.post(srv.url + "/v1/audio/transcriptions", files={"file": ("a.wav", content, "audio/wav")},
                      data=data, timeout=60)


def label(speaker):
    return chr(ord("A") + speaker) if speaker >= 0 else "unknown"


def test_diarized_json_is_openais_shape_with_the_utterances(server, expected):
    r = post(server, response_format="diarized_json")
    assert r.status_code == 200, r.text
    body = r.json()
    doc = TranscriptionDiarized.model_validate(body)
    assert doc.task == "transcribe" and doc.text == expected.text and doc.duration == pytest.approx(14.0)
    assert [(s.speaker, s.text) for s in doc.segments] == [(label(u.speaker), u.text) for u in expected.utterances]
    assert [(s.start, s.end) for s in doc.segments] == [(round(u.start, 3), round(u.end, 3))
                                                        for u in expected.utterances]
    assert {s.type for s in doc.segments} == {"transcript.text.segment"}
    assert len({s.id for s in doc.segments}) == len(doc.segments) > 1
    assert body["usage"] == {"type": "duration", "seconds": 14.0}


def test_the_openai_client_reads_it(server, expected):
    client = openai.OpenAI(base_url=server.url + "/v1", api_key="unused", max_retries=0)
    with open(CLIP, "rb") as f:
        doc = client.audio.transcriptions.create(model="parakeet", file=f, response_format="diarized_json")
    assert isinstance(doc, TranscriptionDiarized)
    assert [s.text for s in doc.segments] == [u.text for u in expected.utterances]


def test_verbose_json_words_and_srt_cues_carry_speakers(server, expected):
    r = post(server, response_format="verbose_json", **{"timestamp_granularities[]": "word"})
    assert r.status_code == 200, r.text
    assert [w["speaker"] for w in r.json()["words"]] == [label(w.speaker) for w in expected.words]
    srt = post(server, response_format="srt")
    assert srt.status_code == 200 and "[Speaker " in srt.text
    plain = post(server, response_format="json")
    assert plain.json() == {"text": expected.text}


def test_limits_and_metrics_are_the_asrs(server):
    audio_before = server.metric("parakeet_audio_seconds_total")
    assert post(server, response_format="diarized_json").status_code == 200
    assert server.metric("parakeet_audio_seconds_total") == pytest.approx(audio_before + 14.0, abs=1e-3)
    data, rate = soundfile.read(CLIP, dtype="int16")
    buf = io.BytesIO()
    soundfile.write(buf, np.tile(data, 2), rate, format="WAV", subtype="PCM_16")  # 28 s > 20 s
    r = post(server, content=buf.getvalue(), response_format="diarized_json")
    assert r.status_code == 413, r.text
    r = post(server, response_format="diarized_json", beam_size="2")
    assert r.status_code == 400 and r.json()["error"]["param"] == "beam_size"


def test_a_server_without_a_diarizer_refuses_diarized_json(tmp_path):
    with ServerProcess([], tmp_path) as srv:
        r = post(srv, response_format="diarized_json")
        assert r.status_code == 400, r.text
        assert r.json()["error"]["param"] == "response_format" and "--diarize-model" in r.json()["error"]["message"]
        words = post(srv, response_format="verbose_json", **{"timestamp_granularities[]": "word"}).json()["words"]
        assert words and all("speaker" not in w for w in words)
