"""``parakeet-cli transcribe --stream --scene``: parakeet.cpp's scene stream live from a file (or
raw PCM on standard input): who said what, by name, and what else is heard, in one feed
(``Context.scene_stream``; docs/cli.md).

The parts are the model's words, and with ``--diarize-model`` their speakers, with ``--voices``
and ``--speaker-model`` the speakers' names (the library's live naming), with ``--sound-model``
the sounds. The source is fed as it arrives (resampled to 16 kHz by a soxr stream); what
commits does not depend on how it is cut. Text prints each utterance as it commits ("Ada: ...",
"[Speaker N] ...", or the bare text without a diarizer) and each sound as it closes ("[start end
label]"); json prints each document of the library that committed or closed something, one a
line, and the last one.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Any, Dict, List, Optional, TextIO

import click
import numpy as np

from parakeet_py import Context, Diarizer, ParakeetError, SoundTagger, SpeakerEncoder, Utterance, VoiceRegistry
from parakeet_py.audio.prepare import pcm_samples

from .common import file_error
from .stream_cmd import open_source
from .subtitles import sound_line, utterance_line

SCENE_RATE = 16000
# Keys of a document that hold what a feed committed or closed.
_PRODUCED = ("words", "utterances", "speakers", "sounds")


class ScenePrinter:
    """Prints each feed's document: its lines (text) or itself (json)."""

    def __init__(self, out: TextIO, fmt: str, diarized: bool) -> None:
        self.out, self.fmt, self.diarized = out, fmt, diarized

    def lines(self, doc: Dict[str, Any]) -> List[str]:
        """An utterance a line, then a sound a line."""
        out = []
        for u in doc["utterances"]:
            if not self.diarized:
                out.append(u["text"])
                continue
            out.append(utterance_line(Utterance(u["speaker"], u["text"], u["start"], u["end"], u["conf"],
                                                u.get("name"), u.get("name_score"))))
        return out + [sound_line(e) for e in doc["sounds"]]

    def __call__(self, doc: Dict[str, Any], last: bool = False) -> None:
        if self.fmt == "json":
            if last or any(doc[key] for key in _PRODUCED):
                self.out.write(json.dumps(doc, ensure_ascii=False) + "\n")
        else:
            self.out.write("".join(line + "\n" for line in self.lines(doc)))
        self.out.flush()


def stream_scene(ctx: Context, source: str, printer: ScenePrinter, **parts: Any) -> None:
    """Feeds ``source`` block by block to a scene stream of ``ctx`` and ``parts`` (scene_stream's
    keywords), handing each document to ``printer``."""
    import soxr

    blocks, rate = open_source(source)
    resampler = None if rate == SCENE_RATE else soxr.ResampleStream(rate, SCENE_RATE, 1, dtype="float32",
                                                                    quality="HQ")
    with ctx.scene_stream(**parts) as stream:
        for block in blocks:
            pcm = pcm_samples(block)  # float32 mono
            printer(stream.feed(pcm if resampler is None else resampler.resample_chunk(pcm)))
        tail = np.zeros(0, np.float32) if resampler is None else resampler.resample_chunk(np.zeros(0, np.float32),
                                                                                           last=True)
        printer(stream.feed(tail, is_last=True), last=True)


def scene_files(files: List[str], model: str, fmt: str, load: Dict[str, Any], diarize_model: Optional[str],
                diarize_component: Optional[str], latency: Optional[str], sound_model: Optional[str],
                voices: Optional[str], speaker_model: Optional[str]) -> None:
    """``--stream --scene`` of one source (a file or ``-``), with the models given."""
    if len(files) != 1:
        raise click.UsageError("--stream takes one FILE (or - for raw PCM on standard input)")
    if fmt not in ("text", "json"):
        raise click.UsageError("--stream --scene prints text or json")
    with contextlib.ExitStack() as opened:
        def load_if(path: Optional[str], model_class: Any, **kwargs: Any) -> Any:
            return None if path is None else opened.enter_context(model_class(path, **kwargs))

        ctx = opened.enter_context(Context(model, **load))
        parts = {"diarizer": load_if(diarize_model, Diarizer, component=diarize_component),
                 "tagger": load_if(sound_model, SoundTagger), "speaker_encoder": load_if(speaker_model, SpeakerEncoder),
                 "registry": load_if(voices, VoiceRegistry.load)}
        printer = ScenePrinter(sys.stdout, fmt, diarize_model is not None)
        try:
            stream_scene(ctx, files[0], printer, latency=latency, **parts)
        except ParakeetError as e:
            raise click.ClickException(file_error(files[0], str(e))) from e
