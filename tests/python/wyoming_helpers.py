"""Running the real ``parakeet-cli wyoming`` for tests, and talking to it with the ``wyoming``
package's own client.

``WyomingProcess`` starts the service in a subprocess (on 127.0.0.1 port 0 unless given another
URI), reads the address it logged (with a deadline), and always stops it by its pid on exit
(SIGTERM, then SIGKILL). Its
log goes to a file, which failures print. ``utterance`` sends one utterance and collects the
answer's events.
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import time
import wave
from pathlib import Path
from typing import List, Optional
from urllib.parse import urlparse

from wyoming.asr import Transcribe
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.event import Event
from wyoming.info import Describe, Info

from data_helpers import MODEL, ROOT

START_TIMEOUT_SEC = 60
STOP_TIMEOUT_SEC = 15
# Seconds any one answer may take (a guard against a hang, not a speed limit).
EVENT_TIMEOUT_SEC = 120
# Audio frames per audio-chunk, as Home Assistant sends them.
FRAMES_PER_CHUNK = 1024


class WyomingProcess:
    """``with WyomingProcess(["-c", "2"], tmp_path) as srv: ... srv.port ...``"""

    def __init__(self, args: List[str], log_dir: Path, model: Path = MODEL, uri: str = "tcp://127.0.0.1:0") -> None:
        self.log_path = log_dir / "wyoming.log"
        self.args = [sys.executable, "-m", "parakeet_cli.main", "wyoming", "-m", str(model),
                     "--uri", uri, "--debug", *args]
        self.proc: Optional[subprocess.Popen] = None
        self.uri = uri  # once started: the address it listens on (the port it picked)
        self.port = 0

    def __enter__(self) -> "WyomingProcess":
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "cli"),
                                                           os.environ.get("PYTHONPATH", "")]))
        with open(self.log_path, "wb") as log:
            self.proc = subprocess.Popen(self.args, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        deadline = time.monotonic() + START_TIMEOUT_SEC
        while time.monotonic() < deadline:
            found = re.search(r"serving .* on ((tcp|unix)://[^,\s]+)", self.log())
            if found:
                self.uri = found.group(1)
                self.port = urlparse(self.uri).port or 0
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        self.stop()
        raise AssertionError(f"parakeet-cli wyoming did not start:\n{self.log()}")

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(STOP_TIMEOUT_SEC)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait(STOP_TIMEOUT_SEC)
            raise AssertionError(f"parakeet-cli wyoming did not stop on SIGTERM:\n{self.log()}")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def client(self) -> AsyncClient:
        return AsyncClient.from_uri(self.uri)


async def read(client: AsyncClient) -> Optional[Event]:
    return await asyncio.wait_for(client.read_event(), EVENT_TIMEOUT_SEC)


async def describe(client: AsyncClient) -> Info:
    await client.write_event(Describe().event())
    return Info.from_event(await read(client))


async def send_audio(client: AsyncClient, pcm: bytes, rate: int, width: int, channels: int) -> None:
    """audio-start and the audio-chunks (no audio-stop)."""
    await client.write_event(AudioStart(rate=rate, width=width, channels=channels).event())
    step = FRAMES_PER_CHUNK * width * channels
    for begin in range(0, len(pcm), step):
        await client.write_event(AudioChunk(rate=rate, width=width, channels=channels,
                                            audio=pcm[begin:begin + step]).event())


async def answer(client: AsyncClient, last: str = "transcript-stop") -> List[Event]:
    """The events the service sends up to and including one of type ``last``."""
    events: List[Event] = []
    while not events or events[-1].type != last:
        event = await read(client)
        assert event is not None, f"the connection ended after {[e.type for e in events]}"
        events.append(event)
    return events


async def until_live(client: AsyncClient, pcm: bytes, rate: int, channels: int) -> List[Event]:
    """transcribe and the 16-bit audio, no audio-stop → the events up to the first live words."""
    await client.write_event(Transcribe().event())
    await send_audio(client, pcm, rate, 2, channels)
    return await answer(client, last="transcript-chunk")


async def utterance(client: AsyncClient, pcm: bytes, rate: int, width: int = 2, channels: int = 1,
                    language: Optional[str] = None, last: str = "transcript-stop") -> List[Event]:
    """transcribe, the audio, audio-stop → the answer's events."""
    await client.write_event(Transcribe(language=language).event())
    await send_audio(client, pcm, rate, width, channels)
    await client.write_event(AudioStop().event())
    return await answer(client, last)


def transcript_text(events: List[Event]) -> str:
    (text,) = [e.data["text"] for e in events if e.type == "transcript"]
    return text


def write_wav(path: Path, pcm: bytes, rate: int, width: int, channels: int) -> Path:
    """The same bytes as a WAV file (Python's wave module writes them as they are)."""
    with wave.open(str(path), "wb") as f:
        f.setnchannels(channels)
        f.setsampwidth(width)
        f.setframerate(rate)
        f.writeframes(pcm)
    return path
