"""Live "who said what": :meth:`Context.stream` with ``diarizer=`` gives a :class:`SpeakerStream`,
around the C ABI's ``parakeet_capi_sas_stream_*`` (a diarization stream on the Diarizer plus
windows transcribed by the Context under parakeet.cpp's commit rule; docs/api.md).

    with ctx.stream(diarizer=d, latency="low") as s:   # d: a Diarizer of a streaming Sortformer
        for pcm in pieces:                               # 16 kHz float32 mono (or sample_rate=)
            for u in s.feed(pcm):                        # Utterance(speaker, text, start, end, confidence)
                print(u.speaker, u.text)
        rest = s.finish()                                # commits the rest

Which words commit, and their speakers, do not depend on how the audio is cut into feeds (the
library checks its commit rule after every 80 ms diarizer frame of a call). Each call hands out
the runs of one speaker among the words it committed, so a feed boundary can split a run in two.
"""

from __future__ import annotations

import threading
from typing import Any, List

import numpy as np
import soxr

from .. import _native
from ..audio.prepare import _check_finite, pcm_samples
from ..errors import InvalidArgument
from ..owned_handle import OwnedHandle
from ..transcript import Utterance
from .diarize import AUDIO_RATE, Diarizer
from .diarize_stream import latency_number


def _utterances(ffi: Any, lib: Any, out: Any, n: int) -> List[Utterance]:
    try:
        # Rounded as Context.transcribe(diarizer=)'s utterances are (times 10 ms, conf 4 decimals).
        return [Utterance(int(r.speaker), ffi.string(r.text).decode("utf-8", "replace"), round(float(r.start), 2),
                          round(float(r.end), 2), round(float(r.conf), 4))
                for r in (out[0][i] for i in range(n))]
    finally:
        lib.parakeet_capi_free_sas_results(out[0], n)


class SpeakerStream(OwnedHandle):
    """One live speaker-attributed transcription (made by ``Context.stream(diarizer=d)``). It
    keeps the Context and the Diarizer alive; closing either closes it (the library's stream
    borrows both). One call at a time (serialised here)."""

    _FREE = "parakeet_capi_sas_stream_free"
    _CLOSED = "the speaker stream is closed"

    def __init__(self, context: Any, diarizer: Any, ptr: Any, latency: int, sample_rate: int) -> None:
        self._context = context
        self._diarizer = diarizer
        self._ptr = ptr
        self._lock = threading.Lock()  # one C call (or the free) at a time; guards the resampler
        #: The diarizer's latency preset (parakeet.cpp's number: 0 model, 1 low, 2 very_low, 3 ultra_low).
        self.latency = latency
        #: The rate this stream's audio is fed at (Hz); other than 16 kHz, it is resampled (soxr).
        self.sample_rate = sample_rate
        self._resampler = (None if sample_rate == AUDIO_RATE
                           else soxr.ResampleStream(sample_rate, AUDIO_RATE, 1, dtype="float32", quality="HQ"))
        self._fed = 0  # input samples so far, to name a bad sample by its position
        self._finished = False

    @property
    def finished(self) -> bool:
        """True once a feed with ``is_last`` (or :meth:`finish`) ran: no more audio is taken."""
        return self._finished

    def feed(self, pcm: np.ndarray, is_last: bool = False) -> List[Utterance]:
        """Feeds audio at :attr:`sample_rate` (a numpy array, as Stream.feed takes; any length, 0
        included); returns the utterances of the words committed by this call, in order (runs
        of one speaker's words within what committed together). ``is_last`` ends the audio and
        commits the rest. Raises InvalidAudio for NaN/Inf samples (nothing of that feed is
        taken), InvalidArgument after the last feed or once the stream is closed."""
        samples = pcm_samples(pcm)
        with self._context._using(), self._lock:
            ptr = self.handle()
            if self._finished:
                raise InvalidArgument("stream already finished")
            _check_finite(samples, "audio array", self._fed)  # before any of it reaches the library
            self._fed += int(pcm.shape[0])
            if self._resampler is not None:
                samples = self._resampler.resample_chunk(samples, last=bool(is_last))
            self._finished = bool(is_last)
            ffi, lib = _native.load()
            out, n = ffi.new("parakeet_sas_result**"), ffi.new("int*")
            _native.check_status(lib.parakeet_capi_sas_stream_feed(
                ptr, ffi.from_buffer("float[]", samples), int(samples.size), 1 if is_last else 0, out, n))
            return _utterances(ffi, lib, out, n[0])

    def finish(self) -> List[Utterance]:
        """Ends the audio: the diarizer runs its last chunks and every remaining word commits."""
        return self.feed(np.zeros(0, np.float32), is_last=True)


def begin(context: Any, ctx_ptr: Any, diarizer: Any, latency: Any, sample_rate: int) -> SpeakerStream:
    """A new :class:`SpeakerStream` on ``ctx_ptr`` and ``diarizer`` at a latency preset (a name
    or 0..3, as Diarizer.stream takes it)."""
    if not isinstance(diarizer, Diarizer):
        raise InvalidArgument(f"diarizer must be a Diarizer, not a {type(diarizer).__name__}")
    number = latency_number(latency)
    _, lib = _native.load()
    with diarizer._using() as diar:
        ptr = _native.check_pointer(lib.parakeet_capi_sas_stream_begin_latency(ctx_ptr, diar, number))
        return diarizer._lend(SpeakerStream(context, diarizer, ptr, number, sample_rate))
