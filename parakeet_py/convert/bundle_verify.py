"""Checks a bundle's components against their content hashes (bundle_schema.content_sha256):
a flipped byte in a component's tensors, names, types or shapes shows as a mismatch."""

from dataclasses import dataclass
from typing import List

import gguf

from . import bundle_schema as bs
from .errors import ConversionError
from .meta_value import field_value


@dataclass(frozen=True)
class ComponentCheck:
    name: str
    stored: str    # parakeet.bundle.<name>.content_sha256
    computed: str  # over the tensors as they are in the file now

    @property
    def ok(self) -> bool:
        return self.stored == self.computed


def verify_bundle(path) -> List[ComponentCheck]:
    """Recomputes every component's content hash; raises ConversionError for a file that is not
    a readable bundle."""
    try:
        reader = gguf.GGUFReader(path)
    except (OSError, ValueError) as e:
        raise ConversionError(f"{path} is not a readable GGUF file: {e}") from e
    arch = reader.get_field("general.architecture")
    if arch is None or field_value(arch) != bs.ARCHITECTURE:
        raise ConversionError(f"{path} is not a bundle (general.architecture is not {bs.ARCHITECTURE!r})")
    names = reader.get_field(bs.COMPONENTS_KEY)
    if names is None:
        raise ConversionError(f"{path}: {bs.COMPONENTS_KEY} is missing")
    checks = []
    for name in field_value(names):
        stored = reader.get_field(bs.component_key(name, "content_sha256"))
        if stored is None:
            raise ConversionError(f"{path}: component {name!r} has no content_sha256")
        prefix = name + "."
        tensors = ((t.name[len(prefix):], t.tensor_type, t.shape.tolist(), t.data)
                   for t in reader.tensors if t.name.startswith(prefix))
        checks.append(ComponentCheck(name, field_value(stored), bs.content_sha256(tensors)))
    return checks
