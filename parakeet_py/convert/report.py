"""What a conversion did, for the CLI to print (table or JSON) and for tests to check."""

from dataclasses import asdict, dataclass, field
from typing import Any, Dict, List


@dataclass
class ConversionReport:
    input: str
    output: str
    out_type: str  # one of quantize.OUT_TYPES
    arch: str
    name: str
    n_tensors: int  # tensors written
    type_counts: Dict[str, int]  # ggml type name (F32, F16, Q8_0, ...) → tensors written as that type
    skipped: List[str]  # state_dict entries not written (0-d, preprocessor internals, non-float)
    bytes_written: int
    seconds: float
    metadata: Dict[str, Any]  # parakeet.* / general.* keys written (tokenizer pieces summarised)
    warnings: List[str] = field(default_factory=list)
    # Allowlisted weights that could not take out_type and kept their type, each with why
    # ("joint.pred.weight stays F32: its row length 640 is not a multiple of ...").
    kept: List[str] = field(default_factory=list)

    def to_dict(self) -> Dict[str, Any]:
        return asdict(self)
