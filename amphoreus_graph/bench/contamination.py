"""Keep benchmark items out of training data: any exported row that quotes an item's text is dropped.

Item texts (situations, options, questions, memories, facts, pressures) are normalised like the exporters'
near-duplicate key; a row is contaminated when one of them appears inside the row's normalised text.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from amphoreus_graph.bench.subjects import default_items_dir

MIN_CHARS = 24  # shorter texts ("Remembrance", a name) would match innocent rows


def normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[\d\W_]+", " ", text.lower())).strip()


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


@cache
def item_index() -> dict[tuple[str, ...], list[tuple[str, ...]]]:
    """Every packaged benchmark item text long enough to be telling (the hand-written items and the default
    scenario's committed ones), as word tuples keyed by their first three words: checking a row then costs one
    dict lookup per word of the row, whatever the item count."""
    index: dict[tuple[str, ...], list[tuple[str, ...]]] = {}
    packaged = [Path(str(e)) for e in resources.files("amphoreus_graph.bench.data").iterdir()]
    for entry in sorted(packaged + list(default_items_dir().iterdir())):
        if entry.name.endswith(".yaml"):
            for item in yaml.safe_load(entry.read_text(encoding="utf-8")).get("items", []):
                for text in _strings(item):
                    words = tuple(normalise(text).split())
                    if len(" ".join(words)) >= MIN_CHARS and words not in index.get(words[:3], []):
                        index.setdefault(words[:3], []).append(words)
    return index


def is_contaminated(text: str) -> bool:
    """Does the text quote any benchmark item text (after normalisation)?"""
    index = item_index()
    words = normalise(text).split()
    for start in range(len(words)):
        for needle in index.get(tuple(words[start : start + 3]), ()):
            if tuple(words[start : start + len(needle)]) == needle:
                return True
    return False
