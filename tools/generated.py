"""Pages with a part written by a tool: the part between two markers is replaced, or checked to be up to date."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path


def with_part(text: str, begin: str, end: str, part: str) -> str:
    """The page with `part` between its markers."""
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}{part}{end}{tail}"


def write_or_check(page: Path, fresh: Callable[[str], str], argv: list[str], what: str, tool: str) -> int:
    """Write the page as `fresh` makes it; with --check only say (exit 1) whether it is out of date."""
    text = page.read_text(encoding="utf-8")
    made = fresh(text)
    if "--check" in argv:
        if made != text:
            print(f"{page}: {what} out of date; run python {tool}")
            return 1
        return 0
    page.write_text(made, encoding="utf-8")
    return 0
