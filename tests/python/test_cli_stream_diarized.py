"""``parakeet-cli transcribe --stream --diarize-model``: live "who said what" prints each
committed utterance as a "[Speaker N] text" line (json: one utterance object a line), the same
words with the same speakers as Python's SpeakerStream gives for the same audio (the words, not
the lines: a call hands out the utterances of its own words, so how the CLI cuts the input into
feeds, which for a pipe depends on the timing of its reads, may split a run in two), from a file (at 16 kHz or resampled) and
from raw PCM on stdin, where lines come out while the input is still open; --diarize-latency
picks the preset; the options and formats it does not go with are usage errors."""

import json
import os
import queue
import subprocess
import sys
import threading

import pytest
import soundfile
import soxr

from cli_helpers import run_cli as run
from data_helpers import CONVERSATION as CLIP, NEMO_DIR, ROOT, conversation_pcm
from parakeet_py import Context, Diarizer
from stream_helpers import per_test_limit

ASR = NEMO_DIR / "hybrid_tdt_ctc" / "model.gguf"
DIAR = NEMO_DIR / "sortformer_stream" / "model.gguf"
RUN_SEC = 60

_bounded = per_test_limit(RUN_SEC + 30)


def python_utterances(pcm, latency, rate=16000):
    with Context(ASR) as ctx, Diarizer(DIAR) as d, ctx.stream(diarizer=d, latency=latency, sample_rate=rate) as s:
        return s.feed(pcm) + s.finish()


@pytest.fixture(scope="module")
def expected():
    return {latency: python_utterances(conversation_pcm(), latency) for latency in ("model", "low")}


def label(speaker):
    return f"[Speaker {speaker + 1}]" if speaker >= 0 else "[Speaker ?]"


def said(utterances):
    """(label, word) for every word of the utterances, in order."""
    return [(label(u.speaker), word) for u in utterances for word in u.text.split()]


def said_in(lines):
    """(label, word) for every word of "[Speaker N] text" lines, in order."""
    return [(head + "]", word) for line in lines for head, text in [line.split("] ", 1)] for word in text.split()]


@pytest.mark.parametrize("latency", ["model", "low"])
def test_text_prints_one_labelled_line_per_utterance(expected, latency):
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", DIAR,
            *(["--diarize-latency", latency] if latency != "model" else []), CLIP)
    assert r.exit_code == 0, r.output
    assert said_in(r.stdout.splitlines()) == said(expected[latency])
    assert len({u.speaker for u in expected[latency]}) >= 2
    assert expected["low"] != expected["model"]  # so the option is seen to reach the stream


def test_json_prints_one_utterance_a_line(expected):
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", DIAR, "--diarize-latency", "low", "-f", "json",
            CLIP)
    assert r.exit_code == 0, r.output
    got = [json.loads(line) for line in r.stdout.splitlines()]
    assert got and all(d.keys() == expected["low"][0].to_dict().keys() for d in got)
    assert [(label(d["speaker"]), w) for d in got for w in d["text"].split()] == said(expected["low"])


def test_a_resampled_file_matches_the_python_stream(tmp_path):
    path = tmp_path / "conversation_22k.wav"
    soundfile.write(path, soxr.resample(conversation_pcm(), 16000, 22050, "HQ"), 22050, subtype="FLOAT")
    data, rate = soundfile.read(path, dtype="float32")
    want = python_utterances(data, "low", rate)
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", DIAR, "--diarize-latency", "low", path)
    assert r.exit_code == 0, r.output
    assert said_in(r.stdout.splitlines()) == said(want) and want


def test_stdin_pcm_prints_utterances_while_it_arrives(expected):
    pcm = (conversation_pcm() * 32768).round().clip(-32768, 32767).astype("<i2")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    p = subprocess.Popen([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(ASR), "--stream",
                          "--diarize-model", str(DIAR), "--diarize-latency", "low", "-"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)
    lines: "queue.Queue[bytes]" = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in p.stdout], daemon=True)
    reader.start()
    p.stdin.write(pcm[:len(pcm) * 3 // 4].tobytes())  # 10.5 s of the 14
    p.stdin.flush()
    first = lines.get(timeout=RUN_SEC)  # an utterance before the input ends
    p.stdin.write(pcm[len(pcm) * 3 // 4:].tobytes())
    p.stdin.close()
    assert p.wait(timeout=RUN_SEC) == 0, p.stderr.read().decode()
    reader.join(timeout=RUN_SEC)
    got = [first] + [lines.get_nowait() for _ in range(lines.qsize())]
    want = python_utterances(pcm, "low")  # int16 samples, as stdin carries them
    assert said_in(b"".join(got).decode().splitlines()) == said(want)
    assert len(want) > 2


@pytest.mark.parametrize("extra,message", [
    (["-f", "srt"], "text or json"),
    (["-f", "vtt"], "text or json"),
    (["--chunk", "2", "--events"], "not with --chunk, --events"),
    (["--language", "en-US"], "not with --language"),
    (["--partial"], "not with --partial"),
    (["--diarize-latency", "fast"], "'fast' is not one of"),
])
def test_options_and_formats_it_does_not_go_with(extra, message):
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", DIAR, *extra, CLIP)
    assert r.exit_code == 2 and message in r.stderr, r.output


def test_latency_needs_a_live_diarizer_and_the_diarizer_must_stream():
    for args in (["--diarize-latency", "low"], ["--stream", "--diarize-latency", "low"],
                 ["--diarize-model", DIAR, "--diarize-latency", "low"]):
        r = run("transcribe", "-m", ASR, *args, CLIP)
        assert r.exit_code == 2 and "--diarize-latency goes with --stream --diarize-model" in r.stderr
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", NEMO_DIR / "sortformer_offline" / "model.gguf", CLIP)
    assert r.exit_code == 1 and "per_feature" in r.stderr
    r = run("transcribe", "-m", ASR, "--stream", "--diarize-model", ASR, CLIP)
    assert r.exit_code == 1 and "is not a diarization model" in r.stderr
