"""``parakeet-cli wyoming --max-batch``: the live streams of a cache-aware model, of all clients
together, share one stream group. Several clients at once get exactly the events each gets
alone and with ``--max-batch 1``; a client that leaves mid-utterance takes its stream out of the
group. Real services on 127.0.0.1, the cache-aware fixture model."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
import soundfile
from wyoming.asr import Transcribe

from data_helpers import CACHE_AWARE_MODELS, SPEECH
from server_helpers import wait_for
from stream_helpers import per_test_limit
from wyoming_helpers import WyomingProcess, answer, send_audio, utterance

pytestmark = pytest.mark.skipif(not CACHE_AWARE_MODELS["ca_rnnt_multi"].exists(),
                                reason="cache-aware fixture model missing")
_bounded = per_test_limit(300)
MODEL = CACHE_AWARE_MODELS["ca_rnnt_multi"]
BATCHED = ["--threads", "1", "--max-batch", "4", "--batch-wait-ms", "50"]


@pytest.fixture(scope="module")
def pcms():
    """Three clients' 16 kHz pcm16 audio: parts of the speech clip of different lengths."""
    samples, rate = soundfile.read(SPEECH, dtype="int16")
    assert rate == 16000 and samples.ndim == 1
    pcm = samples.tobytes()
    return [pcm[:200000], pcm[60000:300000], pcm[150000:]]


def events_of(srv, pcm):
    """The answer (types and data) to one utterance of ``pcm``."""
    async def run():
        async with srv.client() as client:
            return await utterance(client, pcm, 16000)
    return [(e.type, e.data) for e in asyncio.run(run())]


def all_at_once(srv, pcms):
    """Each pcm's answer, every client talking at the same time."""
    async def one(pcm):
        async with srv.client() as client:
            return [(e.type, e.data) for e in await utterance(client, pcm, 16000)]

    async def run():
        return await asyncio.gather(*(one(pcm) for pcm in pcms))
    return asyncio.run(run())


def members_logged(srv):
    return [int(n) for n in re.findall(r"members: (\d+)", srv.log())]


def batch_sizes_logged(srv):
    """The group's batch counts by size, which the service logs as it stops."""
    (sizes,) = re.findall(r"batches of i \+ 1 streams\): (\[[\d, ]*\])", srv.log())
    return json.loads(sizes)


def test_clients_at_once_get_what_each_gets_alone_and_unbatched(tmp_path, pcms):
    with WyomingProcess(BATCHED, tmp_path, model=MODEL) as srv:
        together = all_at_once(srv, pcms)
        alone = [events_of(srv, pcm) for pcm in pcms]
    assert sum(batch_sizes_logged(srv)[1:]) > 0, srv.log()  # the clients' chunks did share batches
    with WyomingProcess(["--threads", "1", "--max-batch", "1"], tmp_path, model=MODEL) as srv:
        unbatched = all_at_once(srv, pcms)
    assert together == alone == unbatched
    for events in together:  # live words came, and the transcript
        assert any(t == "transcript-chunk" and d["text"] for t, d in events[:-2]), events
        assert [t for t, _ in events][-2:] == ["transcript", "transcript-stop"]


def test_a_client_that_leaves_mid_utterance_leaves_the_group(tmp_path, pcms):
    with WyomingProcess(BATCHED, tmp_path, model=MODEL) as srv:
        async def run():
            async with srv.client() as staying:
                async with srv.client() as leaving:
                    for client in (staying, leaving):
                        await client.write_event(Transcribe().event())
                        await send_audio(client, pcms[0], 16000, 2, 1)
                    await answer(leaving, last="transcript-chunk")  # its stream is in the group
                # one member left: the other's stream is still in
                await asyncio.to_thread(wait_for, lambda: 1 in members_logged(srv), "the leaver's stream to leave")
                await answer(staying, last="transcript-chunk")
        asyncio.run(run())
        wait_for(lambda: 0 in members_logged(srv), "the last stream to leave")
        assert members_logged(srv) == [1, 0]
