"""One client's connection: the Wyoming events of speech to text, in and out.

In: ``describe`` → ``info``; ``transcribe`` (an optional language); ``audio-start``, the
``audio-chunk``s and ``audio-stop`` → ``transcript``. With live text on, an utterance's answer
is ``transcript-start``, a ``transcript-chunk`` as words become final (and one with the rest at
the end when the live words begin the final text), ``transcript``, ``transcript-stop``.

A bad event gets an ``error`` event and the connection goes on (only an event whose lengths
lose the framing ends it). Events of other domains are dropped, as the protocol asks. A client
that leaves mid-utterance frees its stream and audio at once.
"""

from __future__ import annotations

import logging
from typing import Any, Optional

from wyoming.asr import Transcribe, Transcript, TranscriptChunk, TranscriptStart, TranscriptStop
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler

from parakeet_py import ParakeetError

from .events import BadEvent, LostFraming, read_event
from .pcm import BadAudio, PcmFormat
from .program import UnknownLanguage, resolve_language
from .utterance import TooLong, Utterance

LOG = logging.getLogger("parakeet.wyoming")


class ProtocolError(ValueError):
    """An event out of place; its message goes to the client."""


class SttHandler(AsyncEventHandler):
    def __init__(self, service: Any, reader: Any, writer: Any) -> None:
        super().__init__(reader, writer)
        self.service = service
        peer = writer.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "client"  # unix sockets: no name
        self.language: Optional[str] = None  # the locale the next utterance is transcribed in
        self.utterance: Optional[Utterance] = None
        self.skipping = False  # an utterance was dropped: its chunks are ignored until audio-stop

    async def run(self) -> None:
        """Events until the client leaves, or an event loses the framing."""
        try:
            while True:
                try:
                    event = await read_event(self.reader)
                except LostFraming as e:
                    await self.error(str(e), "bad-event")
                    break
                except BadEvent as e:
                    await self.error(str(e), "bad-event")
                    continue
                if event is None:
                    break
                await self.handle_event(event)
        except ConnectionError:
            pass  # the client left while an answer was on its way
        finally:
            await self.disconnect()
            self.writer.close()

    async def handle_event(self, event: Event) -> bool:
        try:
            await self.dispatch(event)
        except (ProtocolError, BadAudio, UnknownLanguage) as e:
            await self.error(str(e), "bad-event")
        except ParakeetError as e:  # a stream the library cannot begin, audio it refuses
            await self.error(f"{event.type}: {e}", "failed")
        return True

    async def dispatch(self, event: Event) -> None:
        if Describe.is_type(event.type):
            await self.write_event(self.service.info_event)
        elif Transcribe.is_type(event.type):
            if self.utterance is not None:
                raise ProtocolError("transcribe: an utterance is open; send audio-stop first")
            language = Transcribe.from_event(event).language
            if language is not None and not isinstance(language, str):
                raise ProtocolError(f"transcribe: 'language' must be a string such as 'en-US', not {language!r}")
            self.language = resolve_language(language, self.service.locales)
        elif AudioStart.is_type(event.type):
            fmt = PcmFormat.from_data(event.data, event.type)
            self.skipping = False
            if self.utterance is not None:
                await self.drop_utterance()
                await self.error("audio-start: an utterance was open; it is dropped and a new one begins",
                                 "bad-event")
                await self.end_stream()
            await self.begin(fmt)
        elif AudioChunk.is_type(event.type):
            await self.on_chunk(event)
        elif AudioStop.is_type(event.type):
            await self.on_stop()
        elif Ping.is_type(event.type):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        else:
            LOG.debug("%s: dropped an event of type %r", self.peer, event.type)

    async def begin(self, fmt: PcmFormat) -> None:
        language = self.language or self.service.default_language
        utterance = Utterance(self.service.context, fmt, language, self.service.settings, self.service.group)
        try:
            await self.service.run(utterance.begin)
        except BaseException:
            self.service.close_later(utterance.close)
            raise
        self.utterance = utterance
        self.service.utterances_open += 1
        if self.service.streaming:
            await self.write_event(TranscriptStart(language=language).event())
        LOG.debug("%s: utterance begins (%s)", self.peer, fmt)

    async def on_chunk(self, event: Event) -> None:
        fmt = PcmFormat.from_data(event.data, event.type)
        if self.skipping:
            return
        if self.utterance is None:  # audio-start is optional, as other Wyoming services take it
            await self.begin(fmt)
        utterance = self.utterance
        assert utterance is not None
        if fmt != utterance.format:
            raise ProtocolError(f"audio-chunk: {fmt} differs from the utterance's {utterance.format}; "
                                "the chunk is dropped")
        try:
            due = utterance.add(fmt.samples(event.payload or b""))
        except TooLong as e:
            await self.drop_utterance()
            self.skipping = True
            await self.error(str(e), "too-long")
            await self.end_stream()
            return
        if due:
            text = await self.service.feed(utterance.feed)
            if text:
                await self.write_event(TranscriptChunk(text=text).event())

    async def on_stop(self) -> None:
        utterance = self.utterance
        if utterance is None:
            if self.skipping:  # the end of a dropped utterance: its error was sent
                self.skipping = False
                return
            raise ProtocolError("audio-stop: no audio was sent (audio-start, audio-chunk...)")
        seconds = utterance.seconds
        try:
            text = await self.service.run(utterance.transcribe)
        except ParakeetError as e:
            await self.error(f"transcription failed: {e}", "failed")
            await self.end_stream()
            return
        finally:
            await self.drop_utterance()
            self.language = None  # a transcribe event applies to the utterance after it
        LOG.info("%s: %.2f s: %s", self.peer, seconds, text)
        if self.service.streaming:
            rest = utterance.rest_of(text)
            if rest:
                await self.write_event(TranscriptChunk(text=rest).event())
        await self.write_event(Transcript(text=text, language=utterance.language).event())
        await self.end_stream()

    async def end_stream(self) -> None:
        if self.service.streaming:
            await self.write_event(TranscriptStop().event())

    async def drop_utterance(self) -> None:
        """Frees the open utterance (its stream on a worker thread, once a call on it is over)."""
        utterance, self.utterance = self.utterance, None
        if utterance is not None:
            self.service.utterances_open -= 1
            self.service.close_later(utterance.close)

    async def error(self, text: str, code: str) -> None:
        LOG.debug("%s: error: %s", self.peer, text)
        await self.write_event(Error(text=text, code=code).event())

    async def disconnect(self) -> None:
        if self.utterance is not None:
            await self.drop_utterance()
            LOG.debug("%s: left mid-utterance; its stream and audio are freed (utterances open: %d)",
                      self.peer, self.service.utterances_open)
