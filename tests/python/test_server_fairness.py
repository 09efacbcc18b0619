"""Fair admission: a client with nothing in flight is served within one service slot however
many requests another client has queued (turns.py, queue.py), and takes a flooding client's
queued place when the queue is full. Event-based: jobs block on events the test sets, and the
order in which they start is what is checked."""

import asyncio
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import httpx
import numpy as np
import pytest

from parakeet_py import StreamUpdate

from parakeet_cli.server.live import LiveStreams
from parakeet_cli.server.metrics import Metrics
from parakeet_cli.server.queue import Overloaded, TranscriptionQueue
from parakeet_cli.server.turns import FairTurns
from server_helpers import CLIPS, UNBATCHED, ServerProcess, long_wav_bytes, wait_for

HANG_GUARD_SEC = 180  # the tests wait for events; this only stops a hang


def test_a_newcomer_gets_the_next_turn_ahead_of_a_busy_clients_waiters():
    async def scenario():
        turns = FairTurns(1)
        granted = []

        async def take(client, name):
            await turns.acquire(client)
            granted.append(name)

        await take("flood", "flood-0")  # holds the only turn
        waiters = [asyncio.ensure_future(take("flood", f"flood-{i}")) for i in range(1, 6)]
        await asyncio.sleep(0)
        newcomer = asyncio.ensure_future(take("fresh", "fresh"))
        await asyncio.sleep(0)
        assert granted == ["flood-0"] and turns.waiting == 6
        turns.release("flood")  # one service slot ends
        await asyncio.sleep(0)
        assert granted == ["flood-0", "fresh"]  # not flood-1, which asked first
        for name in range(5):
            turns.release(granted[-1].split("-")[0])
            await asyncio.sleep(0)
        await asyncio.gather(newcomer, *waiters)
        assert granted[2:] == [f"flood-{i}" for i in range(1, 6)]  # the flood's own stay in order

    asyncio.run(scenario())


def test_a_cancelled_waiter_leaves_no_turn_behind():
    async def scenario():
        turns = FairTurns(1)
        await turns.acquire("a")
        gone = asyncio.ensure_future(turns.acquire("b"))
        await asyncio.sleep(0)
        gone.cancel()
        turns.release("a")  # handed on while the cancelled waiter has not resumed yet
        await asyncio.gather(gone, return_exceptions=True)
        await asyncio.wait_for(turns.acquire("c"), HANG_GUARD_SEC)  # the turn came back
        assert turns.active("b") == 0 and turns.waiting == 0

    asyncio.run(scenario())


def _queue(workers=1, max_waiting=2, **kw):
    return TranscriptionQueue(workers=workers, max_waiting=max_waiting, metrics=Metrics(backends=workers,
                                                                                        queue_limit=max_waiting), **kw)


def test_a_newcomer_takes_the_newest_queued_place_of_the_client_holding_most():
    async def scenario():
        queue = _queue(client_share=1.0)  # one client may take all three places
        started, gates = [], {}

        def job(name):
            gates[name] = threading.Event()

            def run():
                started.append(name)
                assert gates[name].wait(HANG_GUARD_SEC)
                return name
            return run

        tickets = [queue.reserve("flood") for _ in range(3)]
        runs = [asyncio.ensure_future(queue.run(job(f"flood-{i}"), t)) for i, t in enumerate(tickets)]
        while not started:
            await asyncio.sleep(0.001)
        assert started == ["flood-0"] and queue.admitted == 3
        with pytest.raises(Overloaded):
            queue.reserve("flood")  # no more places, and a client may not displace itself
        mine = queue.reserve("fresh")  # full: takes flood-2's place (the newest waiting)
        fresh = asyncio.ensure_future(queue.run(job("fresh"), mine))
        with pytest.raises(Overloaded) as lost:
            await runs[2]
        assert lost.value.retry_after >= 1 and "took this request's place" in lost.value.reason
        gates["flood-0"].set()  # one service slot ends: the newcomer goes before flood-1
        while len(started) < 2:
            await asyncio.sleep(0.001)
        assert started == ["flood-0", "fresh"]
        gates["fresh"].set()
        gates.setdefault("flood-1", threading.Event())
        while len(started) < 3:
            await asyncio.sleep(0.001)
        gates["flood-1"].set()
        assert await fresh == "fresh" and await runs[0] == "flood-0" and await runs[1] == "flood-1"
        assert queue.admitted == 0
        queue.shutdown()

    asyncio.run(scenario())


def test_a_request_receiving_its_body_can_lose_its_place_and_one_with_one_place_cannot():
    async def scenario():
        queue = _queue(workers=1, max_waiting=1, client_share=1.0)
        a, b = queue.reserve("flood"), queue.reserve("flood")
        body = asyncio.Event()  # never set: the body keeps arriving
        reading = asyncio.ensure_future(queue.hold(b, body.wait()))
        await asyncio.sleep(0)
        queue.reserve("fresh")  # takes b's place, the newest of the client holding two
        with pytest.raises(Overloaded):
            await reading
        queue.release(a)
        # Now each of two clients holds one place: a third client is refused, nobody displaced.
        queue.reserve("other")
        with pytest.raises(Overloaded):
            queue.reserve("third")
        queue.shutdown()

    asyncio.run(scenario())


def test_a_request_waits_at_most_max_wait_for_a_worker():
    async def scenario():
        queue = _queue(max_wait=0.05)
        gate = threading.Event()
        first = asyncio.ensure_future(queue.run(lambda: gate.wait(HANG_GUARD_SEC)))
        await asyncio.sleep(0)
        with pytest.raises(Overloaded) as late:
            await queue.run(lambda: None)  # the only worker stays busy until the gate opens
        assert "within 0.05 s" in late.value.reason
        gate.set()
        assert await first is True and queue.admitted == 0
        queue.shutdown()

    asyncio.run(scenario())


def _post(srv, data, source=None, timeout=120):
    transport = httpx.HTTPTransport(local_address=source) if source else None
    with httpx.Client(transport=transport, timeout=timeout) as client:
        return client.post(srv.url + "/v1/audio/transcriptions", files={"file": ("a.wav", data, "audio/wav")})


def test_server_admits_a_newcomer_ahead_of_a_flooding_clients_queued_requests(tmp_path):
    long_wav = long_wav_bytes(300)  # seconds of compute each: the flood's requests overlap
    # The flood comes from 127.0.0.2 (all of 127.0.0.0/8 is loopback on Linux), the newcomer
    # from 127.0.0.1: two clients to the server, which listens on 127.0.0.1 only.
    with ServerProcess([*UNBATCHED, "--concurrency", "1", "--threads", "1", "--max-queue", "2", "--attention", "full",
                        "--client-share", "1"], tmp_path) as srv:
        with ThreadPoolExecutor(max_workers=3) as pool:
            flood = [pool.submit(_post, srv, long_wav, "127.0.0.2")]
            wait_for(lambda: srv.metric("parakeet_backends_in_use") == 1 or flood[0].done(), "the flood to run")
            assert not flood[0].done(), flood[0].result().text
            flood += [pool.submit(_post, srv, long_wav, "127.0.0.2") for _ in range(2)]
            wait_for(lambda: srv.metric("parakeet_queue_depth") == 2 or any(f.done() for f in flood),
                  "the flood to queue two more")
            assert not any(f.done() for f in flood), [f.result().text for f in flood if f.done()]
            fresh = _post(srv, CLIPS[0].read_bytes(), "127.0.0.1")  # every place is taken: 3 of 3
            # Answered 200 ahead of the flood's queued requests: one lost its place to it (503),
            # the other, which asked first, is still waiting or running (seconds of compute).
            queued_then = [f.done() and f.result().status_code for f in flood[1:]]
            assert fresh.status_code == 200, fresh.text
            codes = [f.result().status_code for f in flood]
        assert sorted(queued_then, key=str) == sorted([False, 503], key=str), queued_then
        assert codes[0] == 200 and sorted(codes[1:]) == [200, 503], codes
        lost = next(f.result() for f in flood if f.result().status_code == 503)
        assert lost.json()["error"]["code"] == "server_overloaded" and int(lost.headers["retry-after"]) >= 1


class _GatedStream:
    """Stands in for a library stream: each feed waits for the test to let it through."""

    sample_rate = 16000
    settings = {"chunk": 2.0, "left": 10.0, "right": 2.0}
    chunks = 0

    def __init__(self, log):
        self.log, self.gate = log, threading.Semaphore(0)

    def feed(self, samples):
        self.log.append(("feed", samples.shape[0]))
        assert self.gate.acquire(timeout=HANG_GUARD_SEC)
        return StreamUpdate()

    def close(self):
        pass


def test_a_long_feed_takes_one_turn_per_chunk_so_a_newcomer_waits_for_one_chunk():
    async def scenario():
        turns = FairTurns(1)
        context = types.SimpleNamespace(concurrency=1)
        live = LiveStreams(context, 4, Metrics(backends=1, queue_limit=0), turns=turns)
        log = []
        stream = _GatedStream(log)
        lease = live.admit("realtime", "bomb")
        lease.stream = stream
        feeding = asyncio.ensure_future(live.feed(lease, np.zeros(10 * 16000, dtype=np.int16)))  # 5 chunks
        while not log:
            await asyncio.sleep(0.001)

        async def fresh():
            await turns.acquire("fresh")
            log.append(("fresh", 0))
            turns.release("fresh")
        newcomer = asyncio.ensure_future(fresh())
        await asyncio.sleep(0)
        for _ in range(5):
            stream.gate.release()
        await asyncio.wait_for(asyncio.gather(feeding, newcomer), HANG_GUARD_SEC)
        assert log == [("feed", 32000), ("fresh", 0)] + [("feed", 32000)] * 4
        live.end(lease)
        live.shutdown()

    asyncio.run(scenario())
