"""Models by name from the Hugging Face Hub: ``OWNER/REPO[/PATH][@REVISION][:TYPE]``.

    from parakeet_py.hub import resolve_model
    path = resolve_model("nvidia/parakeet-tdt-0.6b-v3")        # downloaded, converted to q8_0 once
    path = resolve_model("nvidia/parakeet-tdt-0.6b-v3:f32")    # NeMo-exact
    path = resolve_model("model.gguf")                         # a local file wins, as it is

``Context``, ``Vad``, ``Diarizer`` and the CLI call :func:`resolve_model`, so they all take
names. ``parakeet_py.hub.inventory`` lists and removes what the cache holds. See docs/models.md.
"""

from .errors import HubError
from .names import HubName, parse_name
from .resolve import pull, resolve_model

__all__ = ["resolve_model", "pull", "parse_name", "HubName", "HubError"]
