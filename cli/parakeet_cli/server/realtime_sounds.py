"""Sound events of a ``/v1/realtime`` session (docs/server.md, "Sound events on realtime
sessions").

A session that asks for them (``transcription.sounds: true``, servers with ``--sound-model``)
gets one sound stream of the CED tagger (``SoundTagger.stream``: 3 s windows every 1 s hop; a
class opens at 0.4 and closes below 0.3, an event shorter than 0.3 s is dropped) fed every
sample it appends, on the session's own timeline (session_audio.py), turns or not. After each
feed the session sends what changed: ``input_audio_buffer.sound_started`` for a class that
opened, ``input_audio_buffer.sound_stopped`` for one that closed, with the library's segment,
or with ``"dropped": true`` when it closed too short to be an event. The stream keeps no
per-window scores (``top_k`` 0: nothing to drain, nothing that grows with the session).

Its methods do blocking work (resampling, the library): the session calls them on a stream
thread, each piece of audio in a backend turn.
"""

from __future__ import annotations

from typing import Any, Dict, List

import numpy as np

from .session_audio import MODEL_RATE, SessionAudio

STARTED = "input_audio_buffer.sound_started"
STOPPED = "input_audio_buffer.sound_stopped"
# Audio fed in one backend turn: the stream's hop, so a turn classifies one window at most.
PIECE_SECONDS = 1.0


def _opening(sound: Dict[str, Any]) -> Dict[str, Any]:
    """What is known of a sound when it opens."""
    return {k: sound[k] for k in ("index", "label", "start")}


class SessionSounds(SessionAudio):
    """One session's sound stream and the classes open in it."""

    piece_samples = int(PIECE_SECONDS * MODEL_RATE)

    def __init__(self, tagger: Any, rate: int) -> None:
        super().__init__(rate)
        self._stream = tagger.stream(top_k=0)
        self._open: Dict[int, Dict[str, Any]] = {}  # class index → the sound that opened

    def hear(self, pcm: np.ndarray) -> List[Dict[str, Any]]:
        """Feeds 16 kHz audio; the events of what opened and closed (started before stopped)."""
        closed = self._stream.feed(pcm)
        active = {s["index"]: s for s in self._stream.active()}
        events: List[Dict[str, Any]] = []
        for segment in closed:
            if self._open.pop(segment["index"], None) is None:  # opened and closed within this feed
                events.append({"type": STARTED, "sound": _opening(segment)})
            events.append({"type": STOPPED, "sound": segment})
        for index in [i for i in self._open if i not in active]:
            events.append({"type": STOPPED, "sound": _opening(self._open.pop(index)), "dropped": True})
        for index, sound in sorted(active.items(), key=lambda item: (item[1]["start"], item[0])):
            if index not in self._open:
                self._open[index] = sound
                events.append({"type": STARTED, "sound": _opening(sound)})
        return events

    def close(self) -> None:
        self._stream.close()
