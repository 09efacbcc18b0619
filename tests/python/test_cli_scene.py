"""``parakeet-cli transcribe --stream --scene``: the scene stream live from a file. On the 30 s
clip with the hybrid ASR, the streaming Sortformer, the ECAPA fixture with a registry naming
"Ada" (voice_helpers) and the CED fixture, the text lines say who said what by name ("Ada: ...",
"[Speaker N] ..." for a voice the registry does not name) and what else is heard ("[start end
label]"), and json prints the library's documents: the same words, names and sounds as Python's
SceneStream gives for the same audio (the words, not the lines: a feed hands out the utterances
of its own words, and the CLI cuts the file into its own feeds). Without a diarizer the lines are
the bare text. Raw PCM on standard input gives the file's words. The options it does not go
with are usage errors."""

import json
import os
import re
import subprocess
import sys

import pytest

from ced_helpers import MODEL as CED
from data_helpers import ROOT
from cli_helpers import run_cli as run
from parakeet_py import Context, Diarizer, SoundTagger, SpeakerEncoder, load_audio
from stream_helpers import per_test_limit
from voice_helpers import ASR, CLIP, DIARIZER, ENCODER, enrolled_registry

SOUND_LINE = re.compile(r"^\[(\d+\.\d\d) (\d+\.\d\d) (.+)\]$")

_bounded = per_test_limit(120)


@pytest.fixture(scope="module")
def registry(tmp_path_factory):
    path = tmp_path_factory.mktemp("scene") / "voices.pksr"
    with Diarizer(DIARIZER) as d, SpeakerEncoder(ENCODER) as enc:
        reg, _ = enrolled_registry(d, enc)
        reg.save(path)
        reg.close()
    return path


def python_docs(named=None, diarized=True):
    """The documents of Python's scene stream fed the clip at once (``named``: a registry file)."""
    from parakeet_py import VoiceRegistry

    with Context(ASR) as ctx, Diarizer(DIARIZER) as d, SoundTagger(CED) as t, SpeakerEncoder(ENCODER) as enc:
        reg = VoiceRegistry.load(named) if named else None
        parts = {"speaker_encoder": enc, "registry": reg} if named else {}
        with ctx.scene_stream(diarizer=d if diarized else None, tagger=t, latency="model", **parts) as s:
            docs = [s.feed(load_audio(CLIP)), s.finish()]
        if reg is not None:
            reg.close()
    return docs


def scene_cli(*args):
    r = run("transcribe", "-m", ASR, "--stream", "--scene", "--sound-model", CED, *args, CLIP)
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


def who(item):
    return item["name"] if item.get("name") else f"[Speaker {item['speaker'] + 1}]"


def test_text_names_the_speakers_and_puts_the_sounds_between_the_lines(registry):
    docs = python_docs(named=registry)
    lines = scene_cli("--diarize-model", DIARIZER, "--voices", registry, "--speaker-model", ENCODER)
    sounds = [m.groups() for m in map(SOUND_LINE.match, lines) if m]
    said = []
    for line in lines:
        if not SOUND_LINE.match(line):
            head, text = line.split("] ", 1) if line.startswith("[Speaker ") else line.split(": ", 1)
            said += [(head + "]" if line.startswith("[Speaker ") else head, word) for word in text.split()]
    assert said == [(who(w), word) for d in docs for w in d["words"] for word in w["text"].split()]
    assert {"Ada", "[Speaker 1]"} <= {name for name, _ in said}  # a named voice and one the registry does not name
    assert sorted(sounds) == sorted((f"{e['start']:.2f}", f"{e['end']:.2f}", e["label"]) for d in docs
                                    for e in d["sounds"])
    # as they close: the first sound comes before the last words
    kinds = [bool(SOUND_LINE.match(line)) for line in lines]
    assert kinds.index(True) < len(kinds) - 1 - kinds[::-1].index(False)


def test_json_prints_the_librarys_documents(registry):
    want = python_docs(named=registry)
    docs = [json.loads(line) for line in scene_cli("--diarize-model", DIARIZER, "--voices", registry,
                                                   "--speaker-model", ENCODER, "-f", "json")]
    assert [w for d in docs for w in d["words"]] == [w for d in want for w in d["words"]]
    assert sorted(json.dumps(e) for d in docs for e in d["sounds"]) == \
        sorted(json.dumps(e) for d in want for e in d["sounds"])
    assert docs[-1]["t"] == 30.0 and docs[-1]["names"] == want[-1]["names"]
    assert all(d["words"] or d["sounds"] or d["speakers"] for d in docs[:-1])


def test_without_a_diarizer_the_lines_are_the_text():
    want = [word for d in python_docs(diarized=False) for w in d["words"] for word in w["text"].split()]
    lines = [line for line in scene_cli() if not SOUND_LINE.match(line)]
    assert want and " ".join(lines).split() == want


def test_raw_pcm_on_stdin_gives_the_files_words():
    pcm = (load_audio(CLIP) * 32768).round().astype("<i2")  # the 16-bit clip's own samples
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    result = subprocess.run([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(ASR), "--stream",
                             "--scene", "--diarize-model", str(DIARIZER), "-f", "json", "-"], input=pcm.tobytes(),
                            capture_output=True, env=env, cwd=ROOT, timeout=100)
    assert result.returncode == 0, result.stderr.decode()
    docs = [json.loads(line) for line in result.stdout.decode().splitlines()]
    with Context(ASR) as ctx, Diarizer(DIARIZER) as d, ctx.scene_stream(diarizer=d, latency="model") as s:
        want = [s.feed(load_audio(CLIP)), s.finish()]
    words = [w for d in docs for w in d["words"]]
    assert words and words == [w for d in want for w in d["words"]]


@pytest.mark.parametrize("extra,message", [
    (["--scene"], "--scene goes with --stream"),
    (["--stream", "--scene", "--chunk", "2"], "not with --chunk"),
    (["--stream", "--scene", "-c", "2"], "not with -c"),
    (["--stream", "--scene", "-f", "srt"], "text or json"),
    (["--stream", "--sound-model", str(CED)], "or with --stream --scene"),
])
def test_options_it_does_not_go_with(extra, message):
    r = run("transcribe", "-m", ASR, *extra, CLIP)
    assert r.exit_code == 2 and message in r.stderr, r.output
