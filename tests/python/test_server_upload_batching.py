"""The server's request batching of uploads (--upload-batch, --batch-wait-ms): concurrent
uploads get exactly the documents each gets with batching off, the metrics count the batches
and the uploads in them, and bad flag values are usage errors. Real servers on 127.0.0.1, the
hybrid TDT+CTC fixture model."""

import io
import subprocess
import sys
import threading

import httpx
import pytest
import soundfile

from data_helpers import CONVERSATION, MODEL, SPEECH
from parakeet_py import load_audio
from server_helpers import ONE_CLIENT, ROOT, ServerProcess, on_threads
from stream_helpers import per_test_limit

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason="fixture model missing")
_bounded = per_test_limit(300)
# Rounds of concurrent uploads tried until some share a batch (see the test).
MAX_ROUNDS = 20


@pytest.fixture(scope="module")
def wavs():
    """Six uploads: parts of two clips of different lengths, as WAV files."""
    speech, conversation = load_audio(SPEECH), load_audio(CONVERSATION)
    parts = [speech[:48000], conversation[16000:56000], speech[20000:21600], conversation[:64000],
             speech[8000:40000], conversation[30000:90000]]
    out = []
    for p in parts:
        buf = io.BytesIO()
        soundfile.write(buf, p, 16000, format="WAV", subtype="PCM_16")
        out.append(buf.getvalue())
    return out


def upload(srv, wav):
    r = httpx.post(srv.url + "/v1/audio/transcriptions", files={"file": ("a.wav", wav, "audio/wav")},
                   data={"model": "parakeet", "response_format": "verbose_json",
                         "timestamp_granularities[]": "word"}, timeout=120)
    assert r.status_code == 200, r.text
    return r.json()


def all_at_once(srv, wavs, rounds):
    """Each upload `rounds` times in a row, every upload on a client thread of its own."""
    start = threading.Barrier(len(wavs))

    def client(i):
        start.wait(timeout=60)
        return [upload(srv, wavs[i]) for _ in range(rounds)]
    return on_threads(len(wavs), client)


def test_concurrent_uploads_get_what_each_gets_alone_and_run_in_batches(tmp_path, wavs):
    with ServerProcess(["--upload-batch", "1", *ONE_CLIENT], tmp_path) as srv:
        alone = [upload(srv, w) for w in wavs]
        assert srv.metric("parakeet_upload_batch_size_count") == 0, "--upload-batch 1: no batching"
    assert sum(len(d["text"]) for d in alone) > 20, "the uploads say something"
    with ServerProcess(["--upload-batch", "4", "--batch-wait-ms", "1000", *ONE_CLIENT], tmp_path) as srv:
        # A lone upload runs at once, so uploads batch only when they overlap in the library; on
        # a fast machine the tiny model can finish each before the next arrives. Rounds repeat
        # until some did overlap (each round's documents checked), the count only a hang guard.
        for rounds in range(1, MAX_ROUNDS + 1):
            got = all_at_once(srv, wavs, rounds=2)
            assert got == [[d, d] for d in alone]
            uploads = 2 * len(wavs) * rounds
            batches = srv.metric("parakeet_upload_batch_size_count")
            if batches < uploads:
                break
        assert srv.metric("parakeet_upload_batch_size_sum") == uploads, "every upload ran in a batch"
        assert 0 < batches < uploads, "some batches hold several uploads"
        assert srv.metric("parakeet_upload_batch_wait_seconds_count") == uploads
        assert srv.metric("parakeet_upload_unbatched_total") == 0


@pytest.mark.parametrize("value", ["0", "two", "257"])
def test_bad_upload_batch_values_are_usage_errors(value):
    r = subprocess.run([sys.executable, "-m", "parakeet_cli.server", "--model", str(MODEL), "--upload-batch", value],
                       cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Invalid value for '--upload-batch'" in r.stderr and "Traceback" not in r.stderr
