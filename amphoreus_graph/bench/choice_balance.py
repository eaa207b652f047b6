"""Shortcut readers for Path-Choice, and an audit of an item set against them.

A dilemma is honest only if its own option cannot be found without weighing what the options mean. Two cheap
readers try: one takes the longest option (authors tend to say most for the answer they believe in), one takes
the option sharing most content words with the subject Path's profile (its summary, tenets and lexicon: the
text every policy is shown of its Path). Where either beats chance, an item set measures words, not Paths.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

from amphoreus_graph.bench.items import ChoiceItem
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.policy.discretion import content_words

LONGEST_SHARE = (0.18, 0.32)  # the share of items whose own option is the longest: about one in four
READER_MARGIN = 5.0  # points either side of chance a shortcut reader may score, on every split

Reader = Callable[[ChoiceItem], list[float]]  # a score per option; the reader picks the highest


def stem(word: str) -> str:
    """A content word cut to a crude stem, so that "endure", "endured", "enduring" and "endures" meet."""
    for suffix in ("ing", "ed", "es", "ly"):
        if len(word) - len(suffix) >= 3 and word.endswith(suffix):
            word = word[: -len(suffix)]
            break
    return word.removesuffix("e") if len(word) > 3 else word


def stems(text: str) -> set[str]:
    """The distinct stems of the text's content words (folded, stop words dropped)."""
    return {stem(w) for w in content_words(text)}


@cache
def profile_stems(path: str) -> frozenset[str]:
    """The stems of a Path's profile: its summary, tenets and lexicon."""
    found = load_paths()[path]
    return frozenset(stems(" ".join([found.summary, *found.tenets, *found.lexicon])))


def longest(item: ChoiceItem) -> list[float]:
    """Each option's length in characters."""
    return [float(len(o.text)) for o in item.options]


def profile_words(item: ChoiceItem) -> list[float]:
    """How many distinct content words each option shares with the profile of the item's Path."""
    profile = profile_stems(item.path)
    return [float(len(stems(o.text) & profile)) for o in item.options]


READERS: dict[str, Reader] = {"longest": longest, "profile_words": profile_words}


def hit(item: ChoiceItem, reader: Reader) -> float:
    """The chance the reader picks the own option, its ties broken by a uniform draw: 1/k when the own option
    is one of k options tied for the highest score, else 0. The audit counts this expectation rather than one
    seeded draw, so its figures do not move with a seed."""
    scores = reader(item)
    best = [o.path for o, s in zip(item.options, scores, strict=True) if s == max(scores)]
    return 1 / len(best) if item.path in best else 0.0


@dataclass(frozen=True)
class SplitAudit:
    """One split's figures (scores 0-100)."""

    split: str
    n: int
    chance: float
    own_longest: float  # share of items (0-1) whose own option is the longest, ties shared
    readers: dict[str, float]

    def misses(self) -> list[str]:
        """The bars this split misses, one phrase each."""
        low, high = LONGEST_SHARE
        found = []
        if not low <= self.own_longest <= high:
            found.append(
                f"the own option is the longest in {self.own_longest:.0%} of items (wanted {low:.0%}-{high:.0%})"
            )
        for name, score in self.readers.items():
            if abs(score - self.chance) > READER_MARGIN:
                found.append(f"the {name} reader scores {score:.1f} (chance {self.chance:.1f} ± {READER_MARGIN:g})")
        return found


def audit_split(split: str, items: Sequence[ChoiceItem]) -> SplitAudit:
    return SplitAudit(
        split=split,
        n=len(items),
        chance=100 * statistics.mean(1 / len(i.options) for i in items),
        own_longest=statistics.mean(hit(i, longest) for i in items),
        readers={name: 100 * statistics.mean(hit(i, reader) for i in items) for name, reader in READERS.items()},
    )


def audit(items: Sequence[ChoiceItem]) -> list[SplitAudit]:
    """The figures for every split the items have, then for all of them together."""
    splits = sorted({i.split for i in items})
    found = [audit_split(s, [i for i in items if i.split == s]) for s in splits]
    return [*found, audit_split("all", items)] if len(splits) > 1 else found


def balance_warnings(items: Sequence[object], label: str) -> list[str]:
    """One line per split of Path-Choice items that misses a bar (none for other tasks' items): the figures, so
    a user sees that their file can be solved without reading it as a Path would."""
    choices = [i for i in items if isinstance(i, ChoiceItem)]
    if not choices:
        return []
    return [
        f"{label} ({a.split}, {a.n} items): {'; '.join(misses)}; such items measure wording, not Paths "
        "(see path_choice.md)"
        for a in audit(choices)
        if (misses := a.misses())
    ]
