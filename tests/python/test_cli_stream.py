"""``parakeet-cli transcribe --stream``: a file and raw PCM on stdin give the Python stream's
text; text comes out while stdin is still open; json lines; usage errors."""

import json
import os
import subprocess
import sys
import threading
import time

import pytest
import soundfile
import soxr

from parakeet_py import Context, load_audio
from stream_helpers import MODELS, SMALL, SPEECH, per_test_limit, run_stream

from data_helpers import ROOT

MODEL = MODELS["tdt"]
WINDOW = ["--chunk", str(SMALL["chunk"]), "--left", str(SMALL["left"]), "--right", str(SMALL["right"])]
RUN_SEC = 120

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")


_bounded = per_test_limit(RUN_SEC + 30)


@pytest.fixture(scope="module")
def expected():
    """The stream's text for the speech clip as int16 PCM (what stdin carries)."""
    pcm = soundfile.read(SPEECH, dtype="int16")[0]
    with Context(MODEL) as ctx:
        return run_stream(ctx.stream(**SMALL), pcm, [len(pcm)])[0]


def cli(*args, **kw):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"), os.environ.get("PYTHONPATH", "")]))
    return subprocess.Popen([sys.executable, "-m", "parakeet_cli.main", "transcribe", "-m", str(MODEL), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT, **kw)


def test_file_prints_the_streams_text(expected):
    p = cli("--stream", *WINDOW, str(SPEECH))
    out, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 0, err.decode()
    assert out.decode() == expected + "\n"
    assert b"\x1b" not in err  # no partials when standard error is not a terminal


def test_stdin_pcm_is_transcribed_as_it_arrives(expected):
    pcm = soundfile.read(SPEECH, dtype="int16")[0].astype("<i2").tobytes()
    p = cli("--stream", *WINDOW, "-", stdin=subprocess.PIPE)
    chunks = []

    def read_all():
        for block in iter(lambda: p.stdout.read1(4096), b""):
            chunks.append((time.monotonic(), block))

    reader = threading.Thread(target=read_all)
    reader.start()
    # Half of the audio in odd-sized writes, then wait for text while stdin is still open.
    half = len(pcm) // 2 + 1
    for begin in range(0, half, 999):
        p.stdin.write(pcm[begin:min(begin + 999, half)])
        p.stdin.flush()
    deadline = time.monotonic() + RUN_SEC / 2
    while not chunks and time.monotonic() < deadline:
        time.sleep(0.05)
    assert chunks, "no text came out before the end of the input"
    p.stdin.write(pcm[half:])
    p.stdin.close()
    assert p.wait(timeout=RUN_SEC) == 0, p.stderr.read().decode()
    reader.join(timeout=RUN_SEC)
    assert b"".join(block for _, block in chunks).decode() == expected + "\n"


def test_json_lines_carry_the_updates(expected):
    p = cli("--stream", *WINDOW, "-f", "json", str(SPEECH))
    out, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 0, err.decode()
    updates = [json.loads(line) for line in out.decode().splitlines()]
    assert len(updates) > 2 and updates[-1]["finalized"]
    assert "".join(u["text"] for u in updates) == expected
    assert all(set(u) >= {"text", "partial", "words", "audio_sec", "final_sec"} for u in updates)


def test_a_resampled_file_matches_the_python_stream(tmp_path):
    audio = load_audio(SPEECH)[:3 * 16000]
    path = tmp_path / "speech_22k.wav"
    soundfile.write(path, soxr.resample(audio, 16000, 22050, "HQ"), 22050, subtype="FLOAT")
    with Context(MODEL) as ctx:
        data, rate = soundfile.read(path, dtype="float32")
        want = run_stream(ctx.stream(**SMALL, sample_rate=rate), data, [len(data)])[0]
    p = cli("--stream", *WINDOW, str(path))
    out, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 0, err.decode()
    assert out.decode() == want + "\n"


@pytest.mark.parametrize("args,message", [
    (["--stream", "a.wav", "b.wav"], "one FILE"),
    (["--stream", "-f", "srt", "-"], "text or json"),
    (["--chunk", "1", str(SPEECH)], "go with --stream"),
])
def test_usage_errors(args, message):
    p = cli(*args)
    out, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 2 and message in err.decode()


def test_bad_settings_and_missing_files_are_one_line_errors():
    p = cli("--stream", "--chunk", "0", str(SPEECH))
    _, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 1 and err.decode().startswith("Error:") and "Traceback" not in err.decode()
    p = cli("--stream", "/no/such.wav")
    _, err = p.communicate(timeout=RUN_SEC)
    assert p.returncode == 1 and "/no/such.wav" in err.decode()


def test_empty_stdin_prints_an_empty_line():
    p = cli("--stream", *WINDOW, "-", stdin=subprocess.PIPE)
    out, err = p.communicate(b"", timeout=RUN_SEC)
    assert p.returncode == 0, err.decode()
    assert out == b"\n"


def test_partials_go_to_stderr_after_the_text_and_are_cleared():
    import io

    from parakeet_cli.stream_cmd import TextPrinter
    from parakeet_py import StreamUpdate

    out, err = io.StringIO(), io.StringIO()
    show = TextPrinter(out, err, partial=True)
    show(StreamUpdate(text="", partial="hel"))
    show(StreamUpdate(text="hello", partial=" wor"))
    show(StreamUpdate(text=" world", finalized=True))
    assert out.getvalue() == "hello world\n"
    # Each partial is drawn after the cursor (saved and restored) and cleared before new text.
    assert err.getvalue() == "\x1b7\x1b[2mhel\x1b[0m\x1b8\x1b[K\x1b7\x1b[2m wor\x1b[0m\x1b8\x1b[K"
