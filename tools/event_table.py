"""Write docs/studio.md's table of progress events from the typed events (amphoreus_graph/contracts/events.py).

Usage: python tools/event_table.py [--check]   (--check: exit 1 if the page is out of date, else 0)
"""

from __future__ import annotations

import sys
from pathlib import Path

from generated import with_part, write_or_check

from amphoreus_graph.contracts.events import markdown_table

PAGE = Path(__file__).resolve().parents[1] / "docs" / "studio.md"
BEGIN, END = "<!-- progress-events:begin -->\n", "<!-- progress-events:end -->"


def with_table(text: str) -> str:
    """The page with the generated table between its markers."""
    return with_part(text, BEGIN, END, markdown_table())


def main(argv: list[str]) -> int:
    return write_or_check(PAGE, with_table, argv, "the progress-events table is", "tools/event_table.py")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
