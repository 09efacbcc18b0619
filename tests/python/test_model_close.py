"""Closing a Diarizer or a Vad while another thread uses it (parakeet_py.owned_handle.SharedModel):
close() waits for the running call, which finishes with its whole result, then frees the model;
later calls are refused; the streams a model lends are closed with it. Each running call is
held inside the library by a progress callback that waits on an event, so "close has not
returned yet" is observed while the call is certainly in flight (freeing the model there would be
a use after free)."""

import threading

import numpy as np
import pytest

from data_helpers import CONVERSATION, MODEL, NEMO_DIR, conversation_pcm
from parakeet_py import Context, Diarizer, InvalidArgument, Vad
from parakeet_py.vad import default_model

DIARIZER = NEMO_DIR / "sortformer_offline" / "model.gguf"
WAIT = 10.0  # seconds any step may take on a loaded machine


class HeldCall:
    """Runs ``call(progress)`` on a thread whose progress callback blocks at its first report until
    released."""

    def __init__(self, call):
        self.inside, self.release, self.result, self.error = threading.Event(), threading.Event(), None, None

        def progress(_fraction):
            self.inside.set()
            assert self.release.wait(WAIT)
            return True

        def run():
            try:
                self.result = call(progress)
            except BaseException as e:  # noqa: BLE001 - handed to the test
                self.error = e

        self.thread = threading.Thread(target=run)
        self.thread.start()
        assert self.inside.wait(WAIT), "the call never reported progress"

    def finish(self):
        self.release.set()
        self.thread.join(WAIT)
        assert not self.thread.is_alive()
        if self.error is not None:
            raise self.error
        return self.result


def close_while(model, held):
    """Closes ``model`` on a thread: it must still be waiting while ``held`` is in the library,
    and return once the call is over."""
    closer = threading.Thread(target=model.close)
    closer.start()
    closer.join(0.3)
    assert closer.is_alive(), "close() returned while a call was using the model"
    result = held.finish()
    closer.join(WAIT)
    assert not closer.is_alive()
    return result


def test_closing_a_diarizer_waits_for_its_running_diarization():
    with Diarizer(DIARIZER) as reference:
        expected = reference.diarize(CONVERSATION)
    d = Diarizer(DIARIZER)
    held = HeldCall(lambda progress: d.diarize(CONVERSATION, progress=progress))
    assert close_while(d, held) == expected
    with pytest.raises(InvalidArgument, match="closed"):
        d.diarize(CONVERSATION)


def test_closing_a_diarizer_waits_for_a_transcription_that_uses_it():
    with Context(MODEL) as ctx:
        d = Diarizer(DIARIZER)
        expected = ctx.transcribe(CONVERSATION, diarizer=d)
        held = HeldCall(lambda progress: ctx.transcribe(CONVERSATION, diarizer=d, progress=progress))
        assert close_while(d, held) == expected
        with pytest.raises(InvalidArgument, match="closed"):
            ctx.transcribe(CONVERSATION, diarizer=d)


def test_closing_a_vad_waits_for_a_transcription_that_uses_it():
    with Context(MODEL) as ctx:
        v = Vad(default_model())
        expected = ctx.transcribe(CONVERSATION, vad=v)
        held = HeldCall(lambda progress: ctx.transcribe(CONVERSATION, vad=v, progress=progress))
        assert close_while(v, held) == expected
        with pytest.raises(InvalidArgument, match="closed"):
            v.segments(conversation_pcm(), 16000)


def test_closing_a_model_closes_the_streams_it_lent():
    pcm = conversation_pcm()[:16000]
    v = Vad(default_model())
    vad_stream = v.stream(16000)
    vad_stream.feed(pcm)
    d = Diarizer(NEMO_DIR / "sortformer_stream" / "model.gguf")
    diar_stream = d.stream("low")
    diar_stream.feed(pcm)
    v.close()
    d.close()
    with pytest.raises(InvalidArgument, match="closed"):
        vad_stream.feed(np.zeros(160, np.float32))
    with pytest.raises(InvalidArgument, match="closed"):
        diar_stream.feed(np.zeros(160, np.float32))
    with pytest.raises(InvalidArgument, match="closed"):
        v.stream(16000)
