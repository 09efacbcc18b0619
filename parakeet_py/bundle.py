"""Bundles (docs/bundles.md): one GGUF file holding several models, each a named component.
The models load from them with ``component=`` (Context, Vad, Diarizer); this module lists a
bundle's components and checks component names given from Python."""

import json
import os
from typing import Any, Dict, List, Optional, Union

from . import _native
from .errors import InvalidArgument


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
