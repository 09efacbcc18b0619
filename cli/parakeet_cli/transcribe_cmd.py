"""``parakeet-cli transcribe``: audio files → text, JSON, SRT or WebVTT."""

from __future__ import annotations

import contextlib
import json
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple, Union

import click

from parakeet_py import Context, Diarizer, ParakeetError, SoundTagger, SpeakerEncoder, Transcript, VoiceRegistry, \
    load_audio
from parakeet_py.batch_call import transcribe_sources
from parakeet_py.sound import MODEL_RATE as SOUND_RATE
from parakeet_py.speakers.diarize_stream import LATENCIES as DIARIZER_LATENCIES

from .common import (ATTENTION, ATTENTION_HELP, DECODER_CHOICE, DIARIZE_MODEL, MODEL_HELP, MODEL_PATH, SOUND_MODEL,
                     SPEAKER_MODEL, STREAM_CONTEXT, VAD_MODEL, component_option, file_error, kernel_options,
                     threads_per_backend)
from .progress_bar import FileProgress, progress_option, progress_wanted, with_progress
from .scene_cmd import scene_files
from .stream_cmd import JsonPrinter, TextPrinter, UtterancePrinter, stream_speakers, stream_transcribe
from .subtitles import sound_line, to_srt, to_vtt, utterance_line

FORMATS = ("text", "json", "srt", "vtt")
EXTENSIONS = {"text": ".txt", "json": ".json", "srt": ".srt", "vtt": ".vtt"}


def render(fmt: str, path: str, transcript: Transcript, sound_events: Optional[List[dict]] = None) -> str:
    """The document for one file (text and json carry no trailing newline). ``sound_events``
    (--sound-model): a "sound_events" list in json, a "[start end label]" line each after the text."""
    if fmt == "text":
        if transcript.segments or transcript.utterances:  # diarized: one line per utterance
            text = "\n".join(utterance_line(u) for u in transcript.utterances)
        else:
            text = transcript.text
        return "\n".join([text] + [sound_line(e) for e in sound_events or []])
    if fmt == "json":
        extra = {} if sound_events is None else {"sound_events": sound_events}
        return json.dumps({"file": path, **transcript.to_dict(), **extra}, ensure_ascii=False)
    if fmt == "srt":
        return to_srt(transcript.words, transcript.duration)
    return to_vtt(transcript.words, transcript.duration)


@click.command("transcribe")
@click.argument("files", nargs=-1, required=True, type=click.Path(dir_okay=False))
@click.option("-m", "--model", required=True, type=MODEL_PATH, help=f"The model: {MODEL_HELP}.")
@component_option()
@click.option("-d", "--decoder", type=DECODER_CHOICE, default="default", show_default=True,
              help="Which head decodes: the model's own (the transducer for hybrid models), ctc, or the "
                   "transducer (tdt, rnnt and transducer are the same choice).")
@click.option("-f", "--format", "fmt", type=click.Choice(FORMATS), default="text", show_default=True,
              help="text: the transcript; json: one JSON object per file and line, with word and token "
                   "timestamps; srt / vtt: subtitles built from the word timestamps.")
@click.option("-o", "--output-dir", type=click.Path(file_okay=False),
              help="Write each result to DIR/<file name>.txt|.json|.srt|.vtt instead of standard output.")
@click.option("-c", "--concurrency", type=click.IntRange(min=1), default=1, show_default=True,
              help="Files transcribed at once (backends in the model's pool; one copy of the weights).")
@click.option("-t", "--threads", type=click.IntRange(min=1),
              help="Compute threads: of the one backend, or of each backend when --concurrency > 1. "
                   "Default: all physical cores ($PARAKEET_THREADS), divided among the backends.")
@click.option("--attention", type=ATTENTION, help=ATTENTION_HELP)
@kernel_options
@click.option("--beam", type=click.IntRange(min=1), default=None,
              help="Beam search with N beams (NeMo's transducer `beam` strategy; TDT and RNN-T heads) "
                   "instead of greedy decoding; prints the best hypothesis. No progress bars.")
@progress_option
@click.option("--scene", is_flag=True,
              help="--stream: parakeet.cpp's scene stream, who said what, by name, and what else is heard in one "
                   "live feed: utterances as they commit (with --diarize-model their speakers, with --voices and "
                   "--speaker-model their names) and sounds as they close (--sound-model); json: the library's "
                   "documents, one a line. Not with --chunk, --left, --right, --att-context, --events, --partial "
                   "or --language.")
@click.option("--stream", "live", is_flag=True,
              help="Live transcription of one FILE, or of raw 16 kHz mono s16le PCM on standard input with "
                   "'-': text is printed as it becomes final (json: one update per line). See --chunk.")
@click.option("--chunk", type=float, default=None,
              help="--stream: seconds decoded per step [default: 2]. Text is final chunk + right seconds "
                   "after it is spoken.")
@click.option("--left", type=float, default=None, help="--stream: seconds of context before a chunk [default: 10].")
@click.option("--right", type=float, default=None, help="--stream: seconds of context after a chunk [default: 2].")
@click.option("--att-context", type=STREAM_CONTEXT, default=None,
              help="--stream on a cache-aware streaming model: its attention context, one of those `info` "
                   "lists (chunks of (R + 1) x 80 ms) [default: the model's first].")
@click.option("--events", is_flag=True, default=False,
              help="--stream, text format: print [EOU] / [EOB] after the text when the model decodes its "
                   "end-of-utterance / backchannel token (json always has them in \"events\").")
@click.option("--partial/--no-partial", default=None,
              help="--stream: show the partial hypothesis on standard error. Default: when standard error "
                   "is a terminal (text format only).")
@click.option("--language", type=str, default=None, metavar="LOCALE",
              help="A prompt-conditioned (multilingual) model's locale, e.g. de-DE (`info` lists them) "
                   "[default: the model's]; other models ignore it.")
@click.option("--vad", "use_vad", is_flag=True,
              help="Cut each file at pauses with the Silero VAD (speech in chunks of at most 30 s; silence is skipped; "
                   "times stay on the file's timeline). Not with --stream or --beam.")
@click.option("--vad-model", type=VAD_MODEL,
              help="--vad: a silero_vad GGUF file or a VAD name (default: the silero-vad package's model, "
                   "converted once into the cache).")
@component_option("--vad-component", "--vad-model")
@click.option("--diarize-model", type=DIARIZE_MODEL,
              help="Who said what: a Sortformer diarization GGUF file or name (e.g. sortformer). Words get "
                   "speakers (json), text prints one \"[Speaker N] ...\" line per utterance, subtitle cues start "
                   "with their speaker. "
                   "With --stream (a streaming Sortformer): each utterance as its words commit, a line of text "
                   "or of json. The default decoder; not with --beam or --vad.")
@component_option("--diarize-component", "--diarize-model")
@click.option("--diarize-latency", type=click.Choice(list(DIARIZER_LATENCIES)), default=None,
              help="--stream --diarize-model: the diarizer's latency preset: model (the checkpoint's own "
                   "streaming configuration), low (1.04 s), very_low (0.64 s), ultra_low (0.32 s) [default: model].")
@click.option("--sound-model", type=SOUND_MODEL,
              help="What else is heard: a CED sound-tagger GGUF file or name (docs/models.md). Its sound events "
                   "(the sound stream's rules, docs/sound.md) follow the text, or are the json's \"sound_events\". "
                   "Not with srt or vtt, nor with --stream but for --stream --scene.")
@click.option("--voices", type=click.Path(exists=True, dir_okay=False),
              help="Who said what, by name: a voice registry file (parakeet-cli speakers enroll). With "
                   "--diarize-model and --speaker-model, text prints \"Ada: ...\" for an utterance whose speaker "
                   "the registry names (\"[Speaker N] ...\" otherwise) and json gives words and utterances a "
                   "\"name\" and \"name_score\". Not with --stream but for --stream --scene; no progress bars.")
@click.option("--speaker-model", type=SPEAKER_MODEL,
              help="--voices: the voicedetect speaker-encoder GGUF file (or model name) the registry's voices were "
                   "enrolled with.")
def transcribe(files: List[str], model: str, decoder: str, fmt: str, output_dir: Optional[str], concurrency: int,
               threads: Optional[int], attention: Optional[object], isa: Optional[str], bf16: Optional[bool],
               progress: Optional[bool], live: bool,
               chunk: Optional[float], left: Optional[float], right: Optional[float],
               att_context: Optional[Tuple[int, int]], events: bool, partial: Optional[bool], beam: Optional[int],
               use_vad: bool, vad_model: Optional[str], language: Optional[str],
               diarize_model: Optional[str], diarize_latency: Optional[str], component: Optional[str],
               vad_component: Optional[str], diarize_component: Optional[str], sound_model: Optional[str],
               voices: Optional[str], speaker_model: Optional[str], scene: bool) -> None:
    """Transcribe FILE... with a Parakeet model.

    FILE may be any format libsndfile reads (WAV, FLAC, OGG, MP3, ...), at any sample rate and
    channel count: audio is mixed down to mono and resampled to the model's rate.

    Results are printed in the order the files were given, however many run at once. With
    several files the text format prints one line per file, the file name, a TAB and the
    text; SRT and WebVTT need --output-dir for more than one file. A file that fails is
    reported on standard error and the others still run; the exit status is then 1.

    \b
    Examples:
      parakeet-cli transcribe -m model.gguf talk.flac
      parakeet-cli transcribe -m model.gguf -f srt talk.mp3 > talk.srt
      parakeet-cli transcribe -m model.gguf -c 4 -t 2 -f json *.wav > out.jsonl
      ffmpeg -i talk.mp3 -f s16le -ac 1 -ar 16000 - | parakeet-cli transcribe -m model.gguf --stream -
      parakeet-cli transcribe -m model.gguf --stream --diarize-model sortformer.gguf meeting.wav
      parakeet-cli transcribe -m model.gguf --diarize-model sortformer.gguf --voices voices.pksr \\
          --speaker-model ecapa.gguf meeting.wav
      parakeet-cli transcribe -m model.gguf --stream --scene --diarize-model sortformer.gguf \\
          --voices voices.pksr --speaker-model ecapa.gguf --sound-model ced.gguf meeting.wav
    """
    if live and beam is not None:
        raise click.UsageError("--beam does not go with --stream")
    if use_vad and (live or beam is not None):
        raise click.UsageError("--vad does not go with --stream or --beam")
    if vad_model and not use_vad:
        raise click.UsageError("--vad-model goes with --vad")
    if diarize_model and (beam is not None or use_vad or decoder != "default"):
        raise click.UsageError("--diarize-model does not go with --beam, --vad or --decoder")
    if diarize_latency is not None and not (live and diarize_model):
        raise click.UsageError("--diarize-latency goes with --stream --diarize-model")
    if vad_component is not None and not vad_model:
        raise click.UsageError("--vad-component goes with --vad-model")
    if diarize_component is not None and not diarize_model:
        raise click.UsageError("--diarize-component goes with --diarize-model")
    if (voices or speaker_model) and not (voices and speaker_model and diarize_model):
        raise click.UsageError("--voices and --speaker-model go together, with --diarize-model")
    if scene and not live:
        raise click.UsageError("--scene goes with --stream")
    if voices and live and not scene:
        raise click.UsageError("--voices does not go with --stream (but with --stream --scene)")
    if sound_model and (live and not scene or fmt not in ("text", "json")):
        raise click.UsageError("--sound-model goes with --format text or json, without --stream (or with --stream "
                               "--scene)")
    load = {"attention": attention, "isa": isa, "bf16": bf16, "component": component}  # Context's load options
    if scene:
        given = window_options_given(chunk, left, right, att_context, partial, language, events)
        given += [name for name, value in (("--output-dir", output_dir), ("--decoder", decoder != "default"),
                                           ("-c", concurrency != 1)) if value]
        if given:
            raise click.UsageError(f"--stream --scene transcribes the library's own windows in the model's language, "
                                   f"to standard output: not with {', '.join(given)}")
        threads_per_backend(1, threads)
        scene_files(files, model, fmt, load, diarize_model, diarize_component, diarize_latency, sound_model, voices,
                    speaker_model)
        return
    if live:
        stream_files(files, model, decoder, fmt, output_dir, concurrency, threads, load, chunk, left, right, partial,
                     att_context, events, language, diarize_model, diarize_latency, diarize_component)
        return
    if chunk is not None or left is not None or right is not None or partial is not None or att_context is not None \
            or events:
        raise click.UsageError("--chunk, --left, --right, --att-context, --events and --partial go with --stream")
    if fmt in ("srt", "vtt") and len(files) > 1 and not output_dir:
        raise click.UsageError(f"--format {fmt} with several files needs --output-dir")
    targets: List[Optional[Path]] = [None] * len(files)
    if output_dir:
        stems = [Path(f).stem for f in files]
        duplicates = sorted({s for s in stems if stems.count(s) > 1})
        if duplicates:
            raise click.UsageError(f"several files would write the same output name: {', '.join(duplicates)}")
        Path(output_dir).mkdir(parents=True, exist_ok=True)
        targets = [Path(output_dir) / (s + EXTENSIONS[fmt]) for s in stems]

    per_backend = threads_per_backend(concurrency, threads)
    # Beam search, VAD-cut and named runs report no progress (diarized runs do: both stages).
    bars = progress_wanted(progress, fmt, sys.stderr) and beam is None and not use_vad and not voices
    # One diarizer for every worker (thread-safe; its pool serves `concurrency` requests at once).
    diarizer = Diarizer(diarize_model, concurrency=concurrency, component=diarize_component) if diarize_model else None
    vad = None
    if use_vad:
        from parakeet_py.vad import Vad, default_model

        vad = Vad(vad_model or default_model(), component=vad_component)  # shared by every worker: it is thread-safe
    tagger = SoundTagger(sound_model) if sound_model else None  # thread-safe too
    # The named call's encoder and registry (both thread-safe) for every worker; {} without --voices.
    naming = {"speakers": VoiceRegistry.load(voices), "speaker_encoder": SpeakerEncoder(speaker_model)} if voices \
        else {}
    failed = 0
    with Context(model, concurrency=concurrency, threads=per_backend if concurrency > 1 else None, **load) as ctx:
        def sound_events(path: str) -> Optional[List[dict]]:
            return None if tagger is None else tagger.events(load_audio(path, target_rate=SOUND_RATE), SOUND_RATE)

        def transcribe_one(i: int, path: str):  # type: ignore[no-untyped-def]
            call = with_progress(ctx.transcribe, Path(path).name, i % concurrency) if bars else ctx.transcribe
            if vad is not None:
                return ctx.transcribe(path, decoder=decoder, vad=vad, language=language)
            if diarizer is not None:
                return call(path, diarizer=diarizer, language=language, **naming)
            return call(path, decoder=decoder, timestamps=fmt != "text", beam=beam, language=language)

        if len(files) > 1 and vad is None and diarizer is None and beam is None and tagger is None:
            outcomes = batched(ctx, files, concurrency, decoder, fmt != "text", language, bars)
        else:
            outcomes = one_by_one(files, concurrency, transcribe_one, sound_events)
        for path, target, outcome in zip(files, targets, outcomes):  # input order, as each is ready
            if isinstance(outcome, ParakeetError):
                click.echo(f"error: {file_error(path, str(outcome))}", err=True)
                failed += 1
                continue
            transcript, events = outcome
            document = render(fmt, path, transcript, events)
            if target is not None:
                target.write_text(document if document.endswith("\n") else document + "\n", encoding="utf-8")
                click.echo(f"wrote {target}", err=True)
            elif fmt == "text" and len(files) > 1:
                click.echo("\n".join(f"{path}\t{line}" for line in document.split("\n")))
            else:
                click.echo(document.rstrip("\n") if fmt in ("srt", "vtt") else document)
            sys.stdout.flush()
    if diarizer is not None:
        diarizer.close()
    if tagger is not None:
        tagger.close()
    for loaded in naming.values():
        loaded.close()
    if failed:
        raise click.exceptions.Exit(1)


Outcome = Union[Tuple[Transcript, Optional[List[dict]]], ParakeetError]


def one_by_one(files: List[str], concurrency: int, transcribe_one: Callable[[int, str], Transcript],
               sound_events: Callable[[str], Optional[List[dict]]]) -> Iterator[Outcome]:
    """Each file's (transcript, sound events) or its error, in input order, ``concurrency``
    files at a time, each with its own progress bar."""
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="transcribe") as pool:
        futures = [pool.submit(lambda i, f: (transcribe_one(i, f), sound_events(f)), i, f)
                   for i, f in enumerate(files)]
        for future in futures:
            try:
                yield future.result()
            except ParakeetError as e:
                yield e


def batched(ctx: Context, files: List[str], concurrency: int, decoder: str, timestamps: bool,
            language: Optional[str], bars: bool) -> Iterator[Outcome]:
    """Each file's (transcript, None) or its error, in input order, through the library's
    batched pass (parakeet_py.batch_call: bitwise each file's own result), with one bar for
    all the files."""
    bar = FileProgress(f"{len(files)} files") if bars else None
    try:
        results = transcribe_sources(ctx, ((f, None) for f in files), workers=concurrency, decoder=decoder,
                                     timestamps=timestamps, language=language)
        for done, result in enumerate(results, 1):
            if bar is not None:
                bar(done / len(files))
            if isinstance(result, Exception) and not isinstance(result, ParakeetError):
                raise result
            yield result if isinstance(result, ParakeetError) else (result, None)
    finally:
        if bar is not None:
            bar.close()


def window_options_given(chunk: Optional[float], left: Optional[float], right: Optional[float],
                         att_context: Optional[Tuple[int, int]], partial: Optional[bool], language: Optional[str],
                         events: bool) -> List[str]:
    """The --stream options of the model's own stream given, which a stream of the library's own
    windows (--diarize-model, --scene) refuses."""
    return [name for name, value in (("--chunk", chunk), ("--left", left), ("--right", right),
                                     ("--att-context", att_context), ("--partial", partial),
                                     ("--language", language), ("--events", events or None)) if value is not None]


def stream_files(files: List[str], model: str, decoder: str, fmt: str, output_dir: Optional[str], concurrency: int,
                 threads: Optional[int], load: Dict[str, Any], chunk: Optional[float], left: Optional[float],
                 right: Optional[float], partial: Optional[bool], att_context: Optional[Tuple[int, int]] = None,
                 events: bool = False, language: Optional[str] = None, diarize_model: Optional[str] = None,
                 diarize_latency: Optional[str] = None, diarize_component: Optional[str] = None) -> None:
    """``--stream``: one source (a file or ``-``), printed as its text becomes final (with
    ``diarize_model``: as each utterance commits)."""
    if len(files) != 1:
        raise click.UsageError("--stream takes one FILE (or - for raw PCM on standard input)")
    if fmt not in ("text", "json") or output_dir or concurrency != 1:
        raise click.UsageError("--stream prints text or json to standard output (no --output-dir, no -c)")
    if diarize_model:
        given = window_options_given(chunk, left, right, att_context, partial, language, events)
        if given:
            raise click.UsageError(f"--stream --diarize-model transcribes the library's own windows in the model's "
                                   f"language, with no partial text: not with {', '.join(given)}")
    show_partial = fmt == "text" and (sys.stderr.isatty() if partial is None else partial)
    printer = (TextPrinter(sys.stdout, sys.stderr, show_partial, events) if fmt == "text" else JsonPrinter(sys.stdout))
    threads_per_backend(1, threads)
    with Context(model, **load) as ctx, (Diarizer(diarize_model, component=diarize_component) if diarize_model
                                         else contextlib.nullcontext()) as diarizer:
        try:
            if diarizer is not None:
                stream_speakers(ctx, diarizer, files[0], latency=diarize_latency or "model",
                                printer=UtterancePrinter(sys.stdout, fmt))
            else:
                stream_transcribe(ctx, files[0], chunk=chunk, left=left, right=right, decoder=decoder,
                                  printer=printer, att_context=att_context, language=language)
        except ParakeetError as e:
            raise click.ClickException(file_error(files[0], str(e))) from e
