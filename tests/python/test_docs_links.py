"""Every relative link in the repository's Markdown points at a file that exists, and every
``#anchor`` at a heading of its target, named the way GitHub names them: a moved section or a
renamed page must take its links along."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Dict, List, Set, Tuple

import pytest

from data_helpers import ROOT

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
FENCE = re.compile(r"^\s*(```|~~~)")


def markdown_files() -> List[Path]:
    listed = subprocess.run(["git", "ls-files", "*.md"], cwd=ROOT, capture_output=True, text=True, check=True)
    return [ROOT / name for name in listed.stdout.split()]


def prose_lines(path: Path) -> List[str]:
    """The lines outside fenced code blocks (a link or heading inside one is not one)."""
    lines, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif not fenced:
            lines.append(line)
    return lines


def github_anchor(heading: str) -> str:
    """GitHub's id of a heading: the text without markup, lower case, punctuation other than
    '-' and '_' dropped, spaces as '-'."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text
    text = re.sub(r"[`*]", "", text).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\- ]", "", text))


_anchors: Dict[Path, Set[str]] = {}


def anchors(path: Path) -> Set[str]:
    if path not in _anchors:
        seen: Dict[str, int] = {}
        found = set()
        for line in prose_lines(path):
            m = HEADING.match(line)
            if not m:
                continue
            base = github_anchor(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else f"{base}-{n}")
        _anchors[path] = found
    return _anchors[path]


def broken_links(path: Path) -> List[Tuple[str, str]]:
    broken = []
    for line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto: ...
                continue
            file_part, _, anchor = target.partition("#")
            dest = (path.parent / file_part).resolve() if file_part else path
            if not dest.exists():
                broken.append((target, "no such file"))
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append((target, f"no heading #{anchor} in {dest.name}"))
    return broken


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_and_anchors_resolve(path: Path) -> None:
    assert broken_links(path) == []


def test_the_checker_finds_a_missing_file_and_a_missing_heading(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Title\n\n## The `x` part\n\n## Dup\n\n## Dup\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#the-x-part) [dup](other.md#dup-1) [gone](missing.md) [bad](other.md#nope)\n"
                    "```\n[in code](missing.md)\n```\n[web](https://example.com/x)\n")
    assert broken_links(page) == [("missing.md", "no such file"),
                                  ("other.md#nope", "no heading #nope in other.md")]
