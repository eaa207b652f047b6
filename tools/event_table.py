"""Write docs/studio.md's table of progress events from the typed events (amphoreus_graph/contracts/events.py).

Usage: python tools/event_table.py [--check]   (--check: exit 1 if the page is out of date, else 0)
"""

from __future__ import annotations

import sys
from pathlib import Path

from amphoreus_graph.contracts.events import markdown_table

PAGE = Path(__file__).resolve().parents[1] / "docs" / "studio.md"
BEGIN, END = "<!-- progress-events:begin -->\n", "<!-- progress-events:end -->"


def with_table(text: str) -> str:
    """The page with the generated table between its markers."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}{markdown_table()}{END}{tail}"


def main(argv: list[str]) -> int:
    text = PAGE.read_text(encoding="utf-8")
    fresh = with_table(text)
    if "--check" in argv:
        if fresh != text:
            print(f"{PAGE}: the progress-events table is out of date; run python tools/event_table.py")
            return 1
        return 0
    PAGE.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
