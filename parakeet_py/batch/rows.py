"""The output rows of a batch job, the same locally and on Ray.

One row per input: ``id``, ``path``, ``text``, ``duration`` (seconds), ``decoder``, ``model``
(the model's id: file name and content hash), ``error`` (None, or why the file failed; then
``text`` and ``duration`` are None), with ``--timestamps`` also ``words`` and ``tokens``, with
``--vad`` also ``segments`` (the speech segments transcribed, [{"start", "end"}] seconds), with
a diarizer (``--diarize-model``) ``speakers`` (how many speakers were heard) and ``utterances``
(``[{"speaker", "text", "start", "end", "confidence"}]``, runs of one speaker's words; the words
of ``--timestamps`` then carry their ``speaker``), then the manifest's other columns. A manifest column whose name an output column already uses
(NeMo's ``text`` and ``duration``) is kept as ``input_<name>``.
"""

from __future__ import annotations

import hashlib
import os
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from ..transcript import Transcript
from .manifest import Entry

if TYPE_CHECKING:
    import pyarrow as pa

CORE_COLUMNS = ("id", "path", "text", "duration", "decoder", "model", "error")
TIMESTAMP_COLUMNS = ("words", "tokens")
VAD_COLUMNS = ("segments",)
DIARIZATION_COLUMNS = ("speakers", "utterances")
RESERVED = CORE_COLUMNS + TIMESTAMP_COLUMNS + VAD_COLUMNS + DIARIZATION_COLUMNS


def model_id(path: str) -> str:
    """``<file name>@<first 12 hex digits of its SHA-256>``: the same model file gives the same
    id on every node, wherever it is stored."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return f"{os.path.basename(path)}@{digest.hexdigest()[:12]}"


def decoder_label(info: Dict[str, Any], decoder: Optional[str]) -> str:
    """The head that decodes: "ctc", "tdt" or "rnnt" (``decoder`` as Context.transcribe takes it;
    None/"default" is the model's own head, the transducer for hybrids)."""
    choice = (decoder or "default").lower()
    if choice == "ctc" or (choice == "default" and not info.get("has_transducer")):
        return "ctc"
    return "tdt" if "tdt" in str(info.get("arch", "")) or info.get("durations") else "rnnt"


def error_message(path: str, message: str) -> str:
    """``path: message``, without repeating the path when the message already names it."""
    return message if message.startswith(path) else f"{path}: {message}"


def exception_message(path: str, e: BaseException) -> str:
    """:func:`error_message` of an exception (its type's name where it says nothing)."""
    return error_message(path, str(e) or type(e).__name__)


def passthrough_name(name: str) -> str:
    return f"input_{name}" if name in RESERVED else name


def make_row(entry: Entry, transcript: Optional[Transcript], error: Optional[str], *, decoder: str, model: str,
             timestamps: bool, vad: bool = False, diarized: bool = False) -> Dict[str, Any]:
    """The output row of ``entry``: from its ``transcript``, or from its ``error`` message."""
    row: Dict[str, Any] = {
        "id": entry.id, "path": entry.path,
        "text": transcript.text if transcript is not None else None,
        "duration": transcript.duration if transcript is not None else None,
        "decoder": decoder, "model": model, "error": error,
    }
    if timestamps:
        row["words"] = [w.to_dict() for w in transcript.words] if transcript is not None else None
        row["tokens"] = [t.to_dict() for t in transcript.tokens] if transcript is not None else None
    if vad:
        row["segments"] = ([dict(s) for s in transcript.speech_segments or []] if transcript is not None else None)
    if diarized:
        row["speakers"] = (len({u.speaker for u in transcript.utterances} - {-1})
                           if transcript is not None else None)
        row["utterances"] = [u.to_dict() for u in transcript.utterances] if transcript is not None else None
    for name, value in entry.extra.items():
        row[passthrough_name(name)] = value
    return row


def arrow_schema(timestamps: bool, passthrough: Optional["pa.Schema"] = None, vad: bool = False,
                 diarized: bool = False) -> "pa.Schema":
    """The Parquet schema of the rows (explicit, so a block whose errors are all None still
    gets a string column and every part file has the same schema)."""
    import pyarrow as pa

    fields: List[Any] = [("id", pa.string()), ("path", pa.string()), ("text", pa.string()),
                         ("duration", pa.float64()), ("decoder", pa.string()), ("model", pa.string()),
                         ("error", pa.string())]
    if timestamps:
        word = [("text", pa.string()), ("start", pa.float64()), ("end", pa.float64()), ("confidence", pa.float64())]
        fields.append(("words", pa.list_(pa.struct(word + ([("speaker", pa.int64())] if diarized else [])))))
        fields.append(("tokens", pa.list_(pa.struct([("id", pa.int64()), ("start", pa.float64()),
                                                     ("duration", pa.float64()), ("confidence", pa.float64())]))))
    if vad:
        fields.append(("segments", pa.list_(pa.struct([("start", pa.float64()), ("end", pa.float64())]))))
    if diarized:
        fields.append(("speakers", pa.int64()))
        fields.append(("utterances", pa.list_(pa.struct([("speaker", pa.int64()), ("text", pa.string()),
                                                         ("start", pa.float64()), ("end", pa.float64()),
                                                         ("confidence", pa.float64())]))))
    for f in passthrough or []:
        fields.append(pa.field(passthrough_name(f.name), f.type))
    return pa.schema(fields)


def passthrough_schema(entries: Iterable[Entry]) -> "pa.Schema":
    """The types of the manifest's extra columns, inferred over every entry."""
    import pyarrow as pa

    extras = [e.extra for e in entries]
    names = list(dict.fromkeys(name for extra in extras for name in extra))
    if not names:
        return pa.schema([])
    table = pa.Table.from_pylist([{n: extra.get(n) for n in names} for extra in extras])
    return table.schema
