"""The engine never names a world's concepts: list every place outside a world's own folder that does.

Usage: python tools/world_words.py [ROOT]   (exit 1 and one `file:line: word` per hit, else exit 0)

Words of the default world (Amphoreus) may appear only under `amphoreus_graph/worlds/amphoreus/`. The default
scenario's *name* (`amphoreus`, lowercase, as in `--scenario amphoreus`) and the package's own name are not
concepts and are allowed. Benchmark item data (`bench/data/`) is content posed in the default world, not engine.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

CONCEPTS = re.compile(
    r"Amphoreus(?!Error|-Graph)|Chrysos|Coreflame|Titan|Black Tide|black_tide|Lycurgus|Vortex|Flame-Chase|Era Nova|"
    r"Okhema|\b[Hh]eirs?\b"
)
SCANNED = ("amphoreus_graph", "graphs")
SUFFIXES = {".py", ".j2", ".md", ".yaml", ".json"}
EXEMPT = ("amphoreus_graph/worlds/amphoreus/", "amphoreus_graph/bench/data/")


def hits(root: Path) -> list[str]:
    found = []
    for top in SCANNED:
        for path in sorted((root / top).rglob("*")):
            relative = path.relative_to(root).as_posix()
            if path.suffix not in SUFFIXES or relative.startswith(EXEMPT) or "__pycache__" in relative:
                continue
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                for match in CONCEPTS.finditer(line):
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
