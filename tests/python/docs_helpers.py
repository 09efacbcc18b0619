"""Reading the tables of docs/ pages, for tests that check a page against the code."""

from typing import List

from data_helpers import ROOT


def doc_table(page: str, heading: str) -> List[List[str]]:
    """The body rows (cells stripped) of the first table under ``## heading`` in docs/``page``."""
    text = (ROOT / "docs" / page).read_text()
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")][1:]  # [0]: the header
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows if not set(row) <= set("|- ")]
