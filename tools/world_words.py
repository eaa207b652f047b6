"""The engine never names a world's concepts: list every place outside a world's own folder that does.

Usage: python tools/world_words.py [ROOT]   (exit 1 and one `file:line: word` per hit, else exit 0)

Every file the package ships is scanned (code, YAML, Markdown, JSON, templates, text: `amphoreus_graph/`,
`graphs/`, `langgraph.json`), benchmark data included. The default world's words (`world_words.txt` beside this
tool: the proper nouns of the lore it was written from, stored here so the lint needs nothing outside the clone)
may appear only under `amphoreus_graph/worlds/amphoreus/`. The default scenario's *name* (`amphoreus`, lowercase,
as in `--scenario amphoreus`) and the package's own name (`amphoreus_graph`, `AmphoreusError`, `Amphoreus-Graph`)
are not concepts and are allowed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

WORDS_FILE = Path(__file__).with_name("world_words.txt")
SCANNED = ("amphoreus_graph", "graphs", "langgraph.json")
SUFFIXES = {".py", ".j2", ".md", ".yaml", ".yml", ".json", ".txt", ".toml", ".cfg", ".html", ".css", ".js"}
EXEMPT = ("amphoreus_graph/worlds/amphoreus/",)
PACKAGE_NAMES = r"(?!Error|-Graph|_graph|Graph)"  # the package's own name is not the world's


def words(path: Path = WORDS_FILE) -> list[str]:
    """The default world's words, one a line (`#` starts a comment line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]


def pattern(names: list[str]) -> re.Pattern[str]:
    """Whole words, longest first (so `Black Tide` is one hit, not `Tide` after it)."""
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    return re.compile(rf"(?<![\w-])(?:{alternatives}){PACKAGE_NAMES}(?![\w])")


def shipped(root: Path) -> list[Path]:
    """The files scanned: everything under SCANNED with a text suffix, caches left out."""
    found: list[Path] = []
    for top in SCANNED:
        start = root / top
        candidates = [start] if start.is_file() else sorted(start.rglob("*"))
        found += [p for p in candidates if p.is_file() and p.suffix in SUFFIXES and "__pycache__" not in p.parts]
    return found


def hits(root: Path, concepts: re.Pattern[str] | None = None) -> list[str]:
    concepts = concepts or pattern(words())
    found = []
    for path in shipped(root):
        relative = path.relative_to(root).as_posix()
        if relative.startswith(EXEMPT):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in concepts.finditer(line):
                found.append(f"{relative}:{number}: {match.group()}")
    return found


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1]
    found = hits(root)
    for hit in found:
        print(hit)
    if found:
        print(f"{len(found)} places name a world's concept outside its folder", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
