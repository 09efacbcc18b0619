"""docs/wyoming.md's options table matches ``parakeet-cli wyoming``: every option is in it,
every flag it names exists, and the defaults it states are the command's."""

import re

from docs_helpers import doc_table
from parakeet_cli.wyoming.command import wyoming


def test_the_options_table_matches_the_command_line():
    options = {opt: p for p in wyoming.params for opt in p.opts + p.secondary_opts}
    documented = set()
    for flag_cell, default_cell, _ in doc_table("wyoming.md", "Options"):
        flags = re.findall(r"`(--?[a-z0-9-]+)", flag_cell)
        assert flags, flag_cell
        for flag in flags:
            assert flag in options, f"{flag} is not an option of parakeet-cli wyoming"
            documented.add(options[flag].name)
        value = options[flags[0]].default
        if isinstance(value, (int, float, str)) and not isinstance(value, bool):
            assert default_cell.strip("`") == (f"{value:g}" if isinstance(value, float) else str(value)), flag_cell
    undocumented = {p.name for p in wyoming.params if p.name != "help"} - documented
    assert not undocumented, f"options missing from docs/wyoming.md: {sorted(undocumented)}"
