"""``parakeet-server`` under concurrent load: parallel requests give the sequential results,
K backends really run at once, and a full queue answers 503 with Retry-After at once."""

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest

from server_helpers import CLIPS, ONE_CLIENT, UNBATCHED, ServerProcess, long_wav_bytes, wait_for

URL_PATH = "/v1/audio/transcriptions"
POLL_SEC = 0.01
DEADLINE_SEC = 180  # a hang guard only: the tests wait for events, and a busy machine is slow


@pytest.fixture(scope="module")
def long_wav():
    # About 70 ms of compute on the fixture model: the tests that use it wait until it runs or
    # accept that it has finished; those that need requests to overlap use very_long_wav.
    return long_wav_bytes(120)


def transcribe(srv, name, data, **form):
    r = httpx.post(srv.url + URL_PATH, files={"file": (name, data, "audio/wav")}, data=form, timeout=120)
    return r



def test_parallel_requests_equal_sequential_ones(tmp_path):
    clips = [(c.name, c.read_bytes()) for c in CLIPS] * 2
    with ServerProcess(["--concurrency", "3", "--max-queue", str(len(clips)), *ONE_CLIENT], tmp_path) as srv:
        sequential = []
        for name, data in clips:
            r = transcribe(srv, name, data, response_format="verbose_json", **{"timestamp_granularities[]": "word"})
            assert r.status_code == 200, r.text
            sequential.append(r.json())
        with ThreadPoolExecutor(max_workers=len(clips)) as pool:
            parallel = list(pool.map(
                lambda c: transcribe(srv, c[0], c[1], response_format="verbose_json",
                                     **{"timestamp_granularities[]": "word"}), clips))
        assert [r.status_code for r in parallel] == [200] * len(clips), [r.text for r in parallel]
        assert [r.json() for r in parallel] == sequential
        assert srv.metric("parakeet_requests_total", {"status": "503"}) == 0


def test_k_backends_run_at_once(tmp_path, very_long_wav):
    # Seconds of compute per request, so that the 10 ms sampler cannot miss the overlap (with
    # the 120 s clip a request took ~70 ms, and the check failed on a loaded machine).
    long_wav = very_long_wav
    with ServerProcess([*UNBATCHED, "--concurrency", "2", "--threads", "1", "--max-queue", "2", "--attention", "full", *ONE_CLIENT],
                       tmp_path) as srv:
        peak = {"in_use": 0.0, "depth": 0.0}
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak["in_use"] = max(peak["in_use"], srv.metric("parakeet_backends_in_use"))
                peak["depth"] = max(peak["depth"], srv.metric("parakeet_queue_depth"))
                time.sleep(POLL_SEC)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            with ThreadPoolExecutor(max_workers=4) as pool:
                results = list(pool.map(lambda i: transcribe(srv, f"long{i}.wav", long_wav), range(4)))
        finally:
            done.set()
            sampler.join(timeout=DEADLINE_SEC)
        assert [r.status_code for r in results] == [200] * 4, [r.text for r in results]
        assert len({r.json()["text"] for r in results}) == 1
        assert peak["in_use"] == 2  # both backends busy at once, never more
        assert peak["depth"] >= 1  # the other two waited in the queue
        assert srv.metric("parakeet_backends_in_use") == 0 and srv.metric("parakeet_queue_depth") == 0


@pytest.fixture(scope="module")
def very_long_wav():
    # The first request must still run while two more arrive: seconds of compute on one thread
    # (under full attention: the servers below pin it, so auto's choice cannot shorten it).
    return long_wav_bytes(300)


def test_full_queue_answers_503_with_retry_after(tmp_path):
    # The first request must outlast the second's arrival and three refusals. On a fast machine
    # 300 s of audio is a quarter of a second of compute, so a try in which it ended too early
    # proves nothing either way and runs again with twice the audio (a server that never
    # refuses fails every try).
    for seconds in (300, 600, 1200):
        if full_queue_try(tmp_path / f"{seconds}s", long_wav_bytes(seconds)):
            return
    pytest.fail("no try held one request running and one queued while three more arrived")


def full_queue_try(log_dir, long_wav):
    """One try of the full-queue scenario; False when the running request ended before the
    scenario was established (inconclusive), else True with every check made."""
    log_dir.mkdir()
    with ServerProcess([*UNBATCHED, "--concurrency", "1", "--threads", "1", "--max-queue", "1", "--attention", "full", *ONE_CLIENT],
                       log_dir) as srv:
        with ThreadPoolExecutor(max_workers=2) as pool:
            running = pool.submit(transcribe, srv, "a.wav", long_wav)
            wait_for(lambda: srv.metric("parakeet_backends_in_use") == 1 or running.done(), "the first request to run")
            if running.done() and running.result().status_code == 200:
                return False
            assert not running.done(), running.result().text
            queued = pool.submit(transcribe, srv, "b.wav", long_wav)
            wait_for(lambda: srv.metric("parakeet_queue_depth") == 1 or queued.done(), "the second request to queue")
            if queued.done() and running.done():
                return False
            assert not queued.done(), queued.result().text
            # One transcribing, one waiting: the queue is full, so a third is refused at once
            # (before its body: a short one keeps the try short). A 503 is itself the event: a
            # request admitted after a slot freed would run (200).
            small = CLIPS[0].read_bytes()
            refused = [transcribe(srv, "c.wav", small) for _ in range(3)]
            if srv.metric("parakeet_queue_depth") != 1 or queued.done():
                # the second request began: the first ended while the three were answered, so the
                # queue may have had room for them (a request admitted then runs after the second)
                return False
            for r in refused:
                assert r.status_code == 503, r.text
                assert int(r.headers["retry-after"]) >= 1
                err = r.json()["error"]
                assert err["code"] == "server_overloaded" and err["type"] == "server_error"
            assert running.result().status_code == 200 and queued.result().status_code == 200
            assert running.result().json() == queued.result().json()
        # The queue drained: the server accepts work again.
        assert transcribe(srv, CLIPS[0].name, CLIPS[0].read_bytes()).status_code == 200
        assert srv.metric("parakeet_requests_total", {"route": URL_PATH, "status": "503"}) == 3
    return True


def test_burst_on_a_tiny_queue_gets_some_503s_and_no_failures(tmp_path, very_long_wav):
    long_wav = very_long_wav  # the first request must still run when the others arrive
    with ServerProcess([*UNBATCHED, "--concurrency", "1", "--max-queue", "0", "--attention", "full"], tmp_path) as srv:
        with ThreadPoolExecutor(max_workers=6) as pool:
            results = list(pool.map(lambda i: transcribe(srv, f"{i}.wav", long_wav), range(6)))
        codes = sorted(r.status_code for r in results)
        assert set(codes) <= {200, 503} and codes.count(200) >= 1 and codes.count(503) >= 1, codes
        assert all("retry-after" in r.headers for r in results if r.status_code == 503)
        assert httpx.get(srv.url + "/health").json()["status"] == "ok"


def test_sigterm_lets_running_requests_finish(tmp_path, long_wav):
    srv = ServerProcess(["--concurrency", "1"], tmp_path)
    with srv:
        with ThreadPoolExecutor(max_workers=1) as pool:
            running = pool.submit(transcribe, srv, "a.wav", long_wav)
            wait_for(lambda: srv.metric("parakeet_backends_in_use") == 1 or running.done(), "the request to run")
            srv.proc.terminate()  # SIGTERM: graceful shutdown
            r = running.result()
        assert r.status_code == 200 and r.json()["text"]
        # uvicorn re-raises the signal once it has shut down gracefully.
        assert srv.proc.wait(timeout=30) in (0, -signal.SIGTERM), srv.log()
        assert "Traceback" not in srv.log()
