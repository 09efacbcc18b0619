"""Bundles (docs/bundles.md): one GGUF file holding several models, each a named component.
The models load from them with ``component=`` (Context, Vad, Diarizer); this module lists a
bundle's components and checks component names given from Python."""

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _native
from .errors import InvalidArgument, ParakeetError


def bundle_components(path: Union[str, "os.PathLike[str]"]) -> List[Dict[str, Any]]:
    """The components of the bundle at ``path`` from its header (``parakeet_capi_bundle_components_json``):
    [{"name", "kind", "license", "license_url", "source", "attribution", "changes",
    "source_sha256", "content_sha256", "tensors", "bytes"}]. Raises the library's error for a
    file that is not a bundle."""
    ffi, lib = _native.load_or_raise()
    return json.loads(_native.string_result(lib.parakeet_capi_bundle_components_json(os.fspath(path).encode("utf-8"))))


def checked_component(component: Optional[str]) -> Optional[str]:
    """``component`` when it is None or a str; InvalidArgument otherwise."""
    if component is not None and not isinstance(component, str):
        raise InvalidArgument(f"component must be a str, not a {type(component).__name__}")
    return component


def component_load_option(component: Optional[str]) -> Dict[str, str]:
    """The load option (``parakeet_capi_load_with``'s "component") that picks ``component``; {} for None."""
    return {} if checked_component(component) is None else {"component": component}


def is_bundle(path: Union[str, "os.PathLike[str]"]) -> bool:
    """Whether the GGUF file at ``path`` is a bundle (general.architecture "parakeet-bundle");
    False for any other file, a plain model or not a GGUF file at all."""
    import gguf

    from .convert.bundle_schema import ARCHITECTURE
    from .convert.meta_value import field_value

    try:
        arch = gguf.GGUFReader(path).get_field("general.architecture")
    except (OSError, ValueError):
        return False
    return arch is not None and field_value(arch) == ARCHITECTURE


def component_of_kind(path: Union[str, "os.PathLike[str]"], kind: str, component: Optional[str]) -> Optional[str]:
    """The component a model class loads from ``path``: ``component`` when given; for a bundle,
    its only component of ``kind`` (asr, vad, diar, ced, voice), so that ``Diarizer(bundle)``
    takes the diarizer beside an ASR model; None for a plain file. InvalidArgument when a bundle has no
    component of ``kind`` or several."""
    if checked_component(component) is not None:
        return component
    try:
        components = bundle_components(path)
    except ParakeetError:
        return None  # not a bundle (a file the library cannot read fails its load with the reason)
    names = [c["name"] for c in components if c["kind"] == kind]
    if len(names) == 1:
        return names[0]
    listing = ", ".join(f"{c['name']} ({c['kind']})" for c in components)
    if not names:
        raise InvalidArgument(f"{os.fspath(path)} is a bundle with no {kind} component; components: {listing}")
    raise InvalidArgument(f"{os.fspath(path)} has several {kind} components, pick one by name (component=, or "
                          f"--component); components: {listing}")
