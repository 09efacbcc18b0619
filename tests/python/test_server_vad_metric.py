"""parakeet_vad_compute_seconds counts the VAD's own compute: a realtime session's append whose
VAD feed waits for the server's only stream thread does not count that wait. Real pieces, in
process: the server's Metrics, LiveStreams and realtime Session, the package's Silero VAD."""

import asyncio
import threading

import numpy as np
import pytest

from data_helpers import MODEL
from parakeet_cli.server.live import LiveStreams
from parakeet_cli.server.metrics import Metrics
from parakeet_cli.server.realtime import DEFAULT_RATE, RealtimeConfig, Session
from parakeet_py import Context, Vad
from parakeet_py.vad import default_model

pytestmark = pytest.mark.skipif(not MODEL.exists(), reason=f"{MODEL} has not been generated")

WAIT = 2.0  # how long the stream thread is kept busy before the VAD can run: far above what
# Silero on 1 s takes even on a loaded machine, so the bound below tells the wait from the work


def test_the_vad_compute_metric_leaves_out_the_wait_for_a_stream_thread():
    with Context(MODEL) as ctx, Vad(default_model()) as vad:
        metrics = Metrics(backends=1, queue_limit=1)
        live = LiveStreams(ctx, max_streams=1, metrics=metrics)
        config = RealtimeConfig(model_id="m", api_key=None, window=(1.0, 1.0, 1.0), idle_seconds=60.0,
                                max_append_bytes=1 << 20, vad=vad)
        session = Session(None, live, config, beta=False, metrics=metrics)
        busy = threading.Event()
        live.close_later(lambda: busy.wait(60))  # the only stream thread is taken
        threading.Timer(WAIT, busy.set).start()
        try:
            asyncio.run(session.append_turns(np.zeros(DEFAULT_RATE, np.int16)))  # 1 s of silence
        finally:
            busy.set()
            session.stop_detector()
            live.shutdown()

    def sample(name):
        return metrics.registry.get_sample_value(name, {"kind": "realtime"})

    assert 0.9 < sample("parakeet_vad_audio_seconds_total") <= 1.0  # the resampler holds back its last few ms
    # Silero on 1 s takes a few ms of one core (docs/performance.md): far under the wait.
    assert 0 < sample("parakeet_vad_compute_seconds_total") < WAIT / 2
