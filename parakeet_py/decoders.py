"""Decoder names → the C ABI's ``PARAKEET_DECODER_*`` values (here, not in :mod:`.context`, so
that the modules :mod:`.context` uses can name a head too)."""

from typing import Dict, Optional

from . import _native
from .errors import InvalidArgument

# Decoder names accepted by Context.transcribe → the C ABI's PARAKEET_DECODER_* value.
DECODERS: Dict[str, int] = {
    "default": _native.DECODER_DEFAULT,
    "ctc": _native.DECODER_CTC,
    "tdt": _native.DECODER_TRANSDUCER,
    "rnnt": _native.DECODER_TRANSDUCER,
    "transducer": _native.DECODER_TRANSDUCER,
}


def decoder_code(decoder: Optional[str]) -> int:
    """``None``/"default", "ctc", "tdt"/"rnnt"/"transducer" (any case) → the C ABI value.

    "tdt", "rnnt" and "transducer" all select the model's transducer head, whichever kind it is.
    """
    if decoder is None:
        return _native.DECODER_DEFAULT
    if isinstance(decoder, str) and decoder.lower() in DECODERS:
        return DECODERS[decoder.lower()]
    raise InvalidArgument(f"unknown decoder {decoder!r} (choose from {', '.join(DECODERS)})")
