"""LocalAI's voice endpoints on the --speaker-model encoder (LocalAI's /v1/voice API, its
VoiceEmbed / VoiceVerify / VoiceIdentify request and response shapes):

* ``POST /v1/voice/embed`` ``{"audio"}`` → ``{"embedding", "dim", "model"}``;
* ``POST /v1/voice/verify`` ``{"audio1", "audio2", "threshold"?}`` → ``{"verified", "distance",
  "threshold", "confidence", "model", "processing_time_ms"}``;
* ``POST /v1/voice/identify`` ``{"audio", "threshold"?}`` (with --voices) → ``{"matches": [...]}``.

JSON bodies; the audio is base64 or a ``data:`` URI of a file the upload formats cover (LocalAI
also takes URLs: this server fetches nothing). ``model`` is the encoder's identity
(``sha256:...``), as parakeet.cpp's LocalAI backend reports it."""

from __future__ import annotations

import base64
import binascii
import json
import time
from typing import Any, Callable, Dict, List, Tuple

import numpy as np
from starlette.concurrency import run_in_threadpool
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from parakeet_py import ParakeetError
from parakeet_py.speakers.encoder import AUDIO_RATE

from .errors import APIError, transcription_error
from .upload import too_large

# Cosine distance at or under which two voices are the same speaker: LocalAI's default, and the
# voice registry's accept rule (cosine 0.5).
DEFAULT_THRESHOLD = 0.5
# Room for the JSON around the base64 audio.
JSON_OVERHEAD_BYTES = 64 * 1024

Decode = Callable[[bytes, str], np.ndarray]


def routes(voices: Any, check_api_key: Callable[[Request], None], decode: Decode, max_upload_bytes: int) -> List[Route]:
    """The three routes. ``voices``: voices.Voices or None (then each answers 400); ``decode``:
    (file bytes, field name) → 16 kHz samples, under the server's audio limits."""
    # verify takes two files, each base64 (4 bytes per 3)
    body_limit = 2 * (max_upload_bytes * 4 // 3) + JSON_OVERHEAD_BYTES

    async def prepared(request: Request, fields: Tuple[str, ...],
                       needs: str = "--speaker-model") -> Tuple[Dict[str, Any], List[np.ndarray]]:
        """(the JSON body, the audio of each field), once the key and the server's models
        (``needs``: "--voices" for the registry too) are checked."""
        check_api_key(request)
        if voices is None or (needs == "--voices" and voices.registry is None):
            raise APIError(400, f"{request.url.path} needs a server started with {needs}", code="unsupported_value")
        body = await read_json(request, body_limit, max_upload_bytes)
        audio = []
        for field in fields:
            data = audio_bytes(body, field)
            try:
                audio.append(await run_in_threadpool(decode, data, field))
            except ParakeetError as e:
                raise field_error(e, field) from e
        return body, audio

    async def embedded(audio: np.ndarray, field: str) -> np.ndarray:
        try:
            return await run_in_threadpool(voices.encoder.embed, audio, sample_rate=AUDIO_RATE)
        except ParakeetError as e:
            raise field_error(e, field) from e

    async def embed(request: Request) -> Response:
        _, (audio,) = await prepared(request, ("audio",))
        vector = await embedded(audio, "audio")
        return JSONResponse({"embedding": vector.tolist(), "dim": int(vector.size), "model": voices.encoder.identity})

    async def verify(request: Request) -> Response:
        started = time.monotonic()
        body, (first, second) = await prepared(request, ("audio1", "audio2"))
        if body.get("anti_spoofing"):
            raise APIError(400, "anti_spoofing is not supported: this server has no anti-spoofing model",
                           param="anti_spoofing", code="unsupported_value")
        threshold = threshold_of(body)
        a, b = await embedded(first, "audio1"), await embedded(second, "audio2")
        distance = 1.0 - float(np.dot(a, b))  # both L2-normalised
        return JSONResponse({"verified": distance <= threshold, "distance": round(distance, 6),
                             "threshold": threshold, "confidence": confidence(distance, threshold),
                             "model": voices.encoder.identity,
                             "processing_time_ms": round((time.monotonic() - started) * 1000, 1)})

    async def identify(request: Request) -> Response:
        body, (audio,) = await prepared(request, ("audio",), needs="--voices")
        threshold = threshold_of(body)
        try:
            name, score = await run_in_threadpool(voices.registry.identify, audio, voices.encoder,
                                                  sample_rate=AUDIO_RATE)
        except ParakeetError as e:
            raise field_error(e, "audio") from e
        distance = 1.0 - score
        # The registry gives the name it accepts (best cosine >= 0.5, clear of the second by 0.05), if any.
        matches = [{"id": name, "name": name, "distance": round(distance, 6),
                    "confidence": confidence(distance, threshold), "match": distance <= threshold}] if name else []
        return JSONResponse({"matches": matches})

    return [Route("/v1/voice/embed", embed, methods=["POST"]),
            Route("/v1/voice/verify", verify, methods=["POST"]),
            Route("/v1/voice/identify", identify, methods=["POST"])]


def confidence(distance: float, threshold: float) -> float:
    """LocalAI's: 100 at distance 0, falling to 0 at the threshold."""
    return round(max(0.0, min(100.0, (1.0 - distance / threshold) * 100.0)), 3)


def threshold_of(body: Dict[str, Any]) -> float:
    """The request's distance threshold; absent, 0 or less: the default (as LocalAI)."""
    value = body.get("threshold", 0)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise APIError(400, "threshold must be a number", param="threshold", code="invalid_value")
    return float(value) if value > 0 else DEFAULT_THRESHOLD


def field_error(e: ParakeetError, field: str) -> APIError:
    """transcription_error's answer, naming the JSON field the audio came in."""
    error = transcription_error(e)
    error.param = field
    return error


def audio_bytes(body: Dict[str, Any], field: str) -> bytes:
    """The file in ``body[field]``: base64, or a base64 ``data:`` URI."""
    value = body.get(field)
    if not isinstance(value, str) or not value:
        raise APIError(400, f"{field} is required: the audio as base64 or a data: URI", param=field,
                       code="missing_value")
    if value.startswith(("http://", "https://")):
        raise APIError(400, f"{field}: this server fetches no URLs; send the audio as base64 or a data: URI",
                       param=field, code="unsupported_value")
    if value.startswith("data:"):
        header, _, value = value.partition(",")
        if not header.endswith(";base64"):
            raise APIError(400, f"{field}: a data: URI must be base64 (data:<type>;base64,...)", param=field,
                           code="invalid_value")
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError) as e:
        raise APIError(400, f"{field} is not valid base64: {e}", param=field, code="invalid_value") from e


async def read_json(request: Request, limit: int, max_upload_bytes: int) -> Dict[str, Any]:
    """The request's JSON object, read up to ``limit`` bytes (413 beyond)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise too_large(max_upload_bytes)
    chunks, received = [], 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > limit:
                raise too_large(max_upload_bytes)
            chunks.append(chunk)
    except ClientDisconnect as e:
        raise APIError(400, "the client disconnected before sending the whole request",
                       code="incomplete_request") from e
    try:
        body = json.loads(b"".join(chunks))
    except (ValueError, UnicodeDecodeError) as e:
        raise APIError(400, f"the body must be a JSON object: {e}", code="invalid_json") from e
    if not isinstance(body, dict):
        raise APIError(400, "the body must be a JSON object", code="invalid_json")
    return body
