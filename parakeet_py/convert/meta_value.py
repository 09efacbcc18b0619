"""One GGUF metadata key as the converter writes it: the value type that the config readers
(nemo_config, prompt_config, streaming_config, sortformer_config) produce and gguf_writer writes.
It has a module of its own so that the readers can share it without importing each other."""

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class MetaValue:
    """One GGUF key: ``kind`` is u32, i32, f32, bool, str, i32[] or str[]."""

    key: str
    kind: str
    value: Any
