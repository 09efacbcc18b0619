"""docs/server.md's limits table matches parakeet-server's command line: every flag it names
exists, its default is the command's, and every option that limits something is in it."""

import re

from docs_helpers import doc_table
from parakeet_cli.server import main

# Options that choose what is served or how, not how much a client may take.
NOT_LIMITS = {"--model", "--threads", "--host", "--port", "--api-key", "--attention", "--isa", "--bf16",
              "--realtime-window", "--sse-window", "--att-context", "--vad-model", "--model-id", "--log-level", "--version", "--help",
              "--diarize-model", "--realtime-diarize-latency", "--component", "--sound-model", "--voices",
              "--speaker-model", "--voice-min-seconds"}


def test_the_limits_table_matches_the_command_line():
    options = {opt: p for p in main.params for opt in getattr(p, "opts", [])}
    documented = set()
    for limit, flag_cell, default, _ in doc_table("server.md", "Limits"):
        for flag in re.findall(r"`(--[a-z-]+)`", flag_cell):
            assert flag in options, f"{flag} ({limit}) is not an option of parakeet-server"
            documented.add(flag)
            value = options[flag].default
            if isinstance(value, (int, float)) and not isinstance(value, bool) and flag_cell == f"`{flag}`":
                first = re.search(r"\d+(\.\d+)?", default)
                assert first and float(first.group()) == float(value), f"{flag}: docs say {default!r}, code {value}"
    limit_options = {opt for p in main.params for opt in getattr(p, "opts", []) if opt.startswith("--")} - NOT_LIMITS
    assert limit_options - documented == set(), "limits missing from docs/server.md's table"
