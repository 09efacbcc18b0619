"""The fields of ``POST /v1/audio/transcriptions``, each checked as OpenAI documents it.

A value the endpoint cannot honour is a 400 naming the field (``param``), never silently
dropped: ``temperature=hot`` is refused, ``include[]=logprobs`` is refused (this engine has no
log probabilities), ``timestamp_granularities[]`` needs verbose_json. Fields that are accepted
but change nothing here (``model``: the server has one; ``prompt``; ``temperature``: decoding
is greedy) are still checked for type and range. ``chunking_strategy`` ``server_vad`` cuts the
upload at the VAD's pauses (``auto``: the whole file is one block). Names the endpoint does not know are refused too.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any, List, Optional

from . import formats
from .errors import APIError
from .vad_settings import ServerVad, parse_server_vad

# Fields of the endpoint (the openai client sends lists as "name[]" and objects as
# "name[key]"); "file" is checked by the handler.
KNOWN = ("file", "model", "language", "prompt", "response_format", "temperature", "timestamp_granularities",
         "stream", "include", "chunking_strategy", "beam_size")
# Newer OpenAI fields for other models (diarization, keyword boosting): understood, not offered.
UNSUPPORTED = ("keywords", "languages", "known_speaker_names", "known_speaker_references")
MAX_MODEL_CHARS = 256
# beam_size (ours, not OpenAI's): NeMo's transducer beam search; its cost grows with the beam.
MAX_BEAM_SIZE = 16
STREAMABLE_FORMATS = ("json", "text")
# ISO-639-1 ("en"), or a locale such as a prompt model's ("de-DE", "auto")
_LANGUAGE = re.compile(r"^(?:[A-Za-z]{2}|[A-Za-z]{2,3}(?:-[A-Za-z0-9]{2,8})+|auto)$")


@dataclass(frozen=True)
class TranscriptionRequest:
    response_format: str = "json"
    granularities: List[str] = field(default_factory=list)
    stream: bool = False
    language: Optional[str] = None
    model: Optional[str] = None
    beam_size: Optional[int] = None  # None: greedy decoding
    vad: Optional[ServerVad] = None  # chunking_strategy server_vad: cut the upload at pauses
    upload: Any = None  # the file part (starlette UploadFile)


def _bad(param: str, message: str, code: str = "invalid_value") -> APIError:
    return APIError(400, message, param=param, code=code)


def _base(key: str) -> str:
    """"include[]" → "include", "chunking_strategy[type]" → "chunking_strategy"."""
    return key.split("[", 1)[0]


def _texts(form: Any, name: str) -> List[str]:
    """Every value sent under ``name`` / ``name[]`` (a file part where text belongs is a 400)."""
    values = []
    for key in (name, name + "[]"):
        for value in form.getlist(key):
            if not isinstance(value, str):
                raise _bad(name, f"'{name}' must be a text field, not a file")
            values.append(value)
    return values


def _one(form: Any, name: str) -> Optional[str]:
    values = _texts(form, name)
    if len(values) > 1:
        raise _bad(name, f"'{name}' was given {len(values)} times; give it once")
    return values[0] if values else None


def _number(text: str, param: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise _bad(param, f"'{param}' must be a number, not {text!r}") from None
    if not math.isfinite(value):
        raise _bad(param, f"'{param}' must be a finite number, not {text!r}")
    return value


def _boolean(text: Optional[str], param: str) -> bool:
    if text is None:
        return False
    value = text.strip().lower()
    if value in ("true", "1"):
        return True
    if value in ("false", "0", ""):
        return False
    raise _bad(param, f"'{param}' must be true or false, not {text!r}")


def _chunking_strategy(form: Any) -> Optional[ServerVad]:
    """None for "auto" (or absent), or a server_vad object (sent as chunking_strategy[key] fields or
    as JSON text): the upload is then cut at the VAD's pauses."""
    param = "chunking_strategy"
    nested = {key[len(param) + 1:-1]: value for key, value in form.multi_items()
              if key.startswith(param + "[") and key.endswith("]")}
    plain = _one(form, param)
    if plain is None and not nested:
        return None
    if plain is not None and nested:
        raise _bad(param, "give 'chunking_strategy' either as \"auto\" or as an object, not both")
    if plain is not None:
        if plain.strip() == "auto":
            return None
        try:
            nested = json.loads(plain)
        except (ValueError, RecursionError):  # deep nesting exhausts the parser's recursion
            raise _bad(param, f"'chunking_strategy' must be \"auto\" or a server_vad object, not {plain[:40]!r}") from None
        if not isinstance(nested, dict):
            raise _bad(param, f"'chunking_strategy' must be \"auto\" or a server_vad object, not {plain[:40]!r}")
    if nested.get("type") != "server_vad":
        raise _bad(param, "chunking_strategy.type must be 'server_vad' (or give chunking_strategy=auto)")
    return parse_server_vad(nested, param, lambda _key, message: _bad(param, message))


def parse(form: Any) -> TranscriptionRequest:
    """The checked request, or an APIError 400 naming the first bad field."""
    model = _one(form, "model")
    if model is not None and (not model.strip() or len(model) > MAX_MODEL_CHARS):
        raise _bad("model", f"'model' must be a model id of 1 to {MAX_MODEL_CHARS} characters")

    response_format = (_one(form, "response_format") or "json").strip().lower()
    if response_format not in formats.RESPONSE_FORMATS:
        raise _bad("response_format", f"unsupported response_format {response_format!r}; use one of "
                                      f"{', '.join(formats.RESPONSE_FORMATS)}")

    granularities = [g.strip().lower() for g in _texts(form, "timestamp_granularities")]
    for g in granularities:
        if g not in formats.GRANULARITIES:
            raise _bad("timestamp_granularities", f"unsupported timestamp granularity {g!r}; use word and/or segment")
    if granularities and response_format != "verbose_json":
        raise _bad("timestamp_granularities", "timestamp_granularities needs response_format=verbose_json")

    language = _one(form, "language")
    language = language.strip() if language is not None else None
    if language and not _LANGUAGE.match(language):
        raise _bad("language", f"'language' must be an ISO-639-1 code such as 'en' or a locale such as 'de-DE', "
                               f"not {language!r}")

    _one(form, "prompt")  # any text: accepted, no effect on a greedy decoder

    temperature = _one(form, "temperature")
    if temperature is not None and temperature.strip():
        value = _number(temperature.strip(), "temperature")
        if not 0.0 <= value <= 1.0:
            raise _bad("temperature", f"'temperature' must be between 0 and 1, not {value:g}")

    stream = _boolean(_one(form, "stream"), "stream")
    if stream and response_format not in STREAMABLE_FORMATS:
        raise _bad("stream", f"response_format {response_format!r} cannot be streamed; use json or text",
                   code="unsupported_value")

    for item in _texts(form, "include"):
        if item.strip() == "logprobs":
            raise _bad("include", "include[]=logprobs is not supported: this engine gives no log probabilities",
                       code="unsupported_value")
        raise _bad("include", f"unsupported include[] value {item!r}; the only one OpenAI defines is logprobs")

    beam_size = _beam_size(_one(form, "beam_size"), stream)
    vad = _chunking_strategy(form)
    if vad is not None and stream:
        raise _bad("chunking_strategy", "chunking_strategy server_vad cannot be used with stream=true",
                   code="unsupported_value")
    if vad is not None and beam_size is not None:
        raise _bad("chunking_strategy", "chunking_strategy server_vad cannot be used with beam_size",
                   code="unsupported_value")
    upload = _upload(form)

    for key in form.keys():
        name = _base(key)
        if name in UNSUPPORTED:
            raise _bad(name, f"'{name}' is not supported by this server", code="unsupported_value")
        if name not in KNOWN:
            raise _bad(name, f"unrecognized request field {key!r}", code="unknown_parameter")
    return TranscriptionRequest(response_format=response_format, granularities=granularities, stream=stream,
                                language=language or None, model=model, beam_size=beam_size, vad=vad,
                                upload=upload)


def _beam_size(text: Optional[str], stream: bool) -> Optional[int]:
    """``beam_size``: an int in 1..MAX_BEAM_SIZE (beam search, the best hypothesis), absent or
    empty for greedy decoding; not with stream=true (streams decode greedily)."""
    if text is None or not text.strip():
        return None
    # At most a few digits before int(): Python refuses to convert more than 4300 (a ValueError,
    # which would be a 500), and no beam that long is allowed anyway.
    digits = text.strip()
    if not re.fullmatch(r"\d{1,6}", digits) or not 1 <= int(digits) <= MAX_BEAM_SIZE:
        raise _bad("beam_size", f"'beam_size' must be an integer from 1 to {MAX_BEAM_SIZE}, not {text[:20]!r}")
    if stream:
        raise _bad("beam_size", "beam_size cannot be used with stream=true", code="unsupported_value")
    return int(text)


def _upload(form: Any) -> Any:
    upload = form.get("file")
    if upload is None:
        raise APIError(400, "missing the 'file' field (the audio to transcribe)", param="file", code="missing_file")
    if isinstance(upload, str) or not hasattr(upload, "file"):
        raise APIError(400, "'file' must be a file upload (multipart part with a filename)", param="file",
                       code="invalid_file")
    if not upload.size:
        raise APIError(400, "the uploaded file is empty", param="file", code="empty_file")
    return upload
