"""The words that name a Path, and a mask that takes them out of text before any Path judge hears it.

A Path judge that hears a Path's own words is a keyword counter: a speaker earns the Path by saying them.
So every judge of which Path speech sounds like hears it masked: every lexicon entry of every Path of the
catalog (both halves, phrases as phrases), every Path name and every patron's name are taken out, whatever their
case, accents or inflection (plural, -ed, -ing, -er, -ly, -ness, -ful…). A leading article of an entry is not
part of it ("the trail" masks "trail" too). Occurrences are deleted, not replaced by a visible placeholder:
a placeholder is itself a token the embedder hears, so adding a word would still move a verdict; deleted,
the masked text is the same with or without it. Works on any catalog (it reads only the catalog's fields).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from amphoreus_graph.catalogs.paths import PathCatalog

# Endings a word of speech may take and still be the same word: inflections and the commonest derivations.
_SUFFIXES = (
    "s", "es", "ed", "d", "ing", "er", "ers", "est", "ly", "ily", "ness", "iness", "ful", "fully", "less",
    "ous", "ious", "ment", "ments", "ation", "ations", "ate", "ated", "ates", "ating", "ion", "ions", "ive",
    "al", "ally", "ism", "ist", "ists", "ity", "y", "ies", "ied", "ier", "iest", "en",
)  # fmt: skip
# The endings cut off a lexicon entry's own words: only those that keep its sense ("wounds" is "wound",
# "annihilation" is "annihilate"), not "-less" or "-ier" ("timeless" is not "time", "frontier" not "front").
_ENTRY_SUFFIXES = ("s", "es", "ed", "d", "ing", "ness", "iness", "ly", "ily", "ies", "ied", "ation", "ations", "ion")
_ARTICLES = {"the", "a", "an"}
_MIN_ROOT = 4  # a form shorter than this, once an ending is cut off, matches too many other words
_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z]+)?")


def fold(text: str) -> tuple[str, list[int]]:
    """Lower-cased, accent-free text, and for each of its characters the index of the character it came from."""
    folded: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        plain = "".join(c for c in unicodedata.normalize("NFKD", char) if not unicodedata.combining(c))
        plain = plain.casefold().replace("\u2019", "'")
        folded.append(plain)
        origin.extend([index] * len(plain))
    return "".join(folded), origin


def roots(word: str, suffixes: tuple[str, ...] = _SUFFIXES) -> frozenset[str]:
    """The forms a folded word may stand for once one of `suffixes` is cut off: itself, and each form of at
    least `_MIN_ROOT` letters with the ending cut, a silent e put back, a y for an i, a doubled consonant
    single (a possessive 's is no ending: it is cut whatever is left, so "Lan's" is Lan)."""
    word = word.removesuffix("'s")
    found = set()
    for suffix in suffixes:
        if not word.endswith(suffix):
            continue
        stem = word[: -len(suffix)]
        found |= {stem, stem + "e"}
        if stem.endswith("i"):
            found.add(stem[:-1] + "y")
        if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiou":
            found.add(stem[:-1])
        if stem.endswith("e"):
            found.add(stem[:-1])
    return frozenset({word} | {form for form in found if len(form) >= _MIN_ROOT})


class PathWordMask:
    """A set of words and phrases (`of(catalog)`: every Path word, Path name and patron name of a catalog), and
    `mask` to delete them from text."""

    def __init__(self, entries: Iterable[str]) -> None:
        self.entries: tuple[tuple[str, ...], ...] = tuple(
            sorted({phrase for entry in entries if (phrase := _phrase(entry))}, key=lambda p: (-len(p), p))
        )
        self._roots = {word: roots(word, _ENTRY_SUFFIXES) for phrase in self.entries for word in phrase}

    @classmethod
    def of(cls, catalog: PathCatalog) -> PathWordMask:
        return cls(name for path in catalog.paths.values() for name in (path.name, path.patron, *path.lexicon))

    def spans(self, text: str) -> list[tuple[int, int]]:
        """(start, end) in `text` of every Path word, longest entry first, never overlapping."""
        folded, origin = fold(text)
        tokens = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(folded)]
        token_roots = [roots(t) for t, _, _ in tokens]
        taken = [False] * len(tokens)
        found: list[tuple[int, int]] = []
        for phrase in self.entries:
            for start in range(len(tokens) - len(phrase) + 1):
                window = range(start, start + len(phrase))
                if any(taken[i] for i in window):
                    continue
                if all(self._roots[word] & token_roots[i] for word, i in zip(phrase, window, strict=True)):
                    for i in window:
                        taken[i] = True
                    found.append((origin[tokens[start][1]], origin[tokens[window[-1]][2] - 1] + 1))
        return sorted(found)

    def mask(self, text: str) -> str:
        """The text with every Path word deleted and the spaces left behind closed up."""
        kept, last = [], 0
        for start, end in self.spans(text):
            kept.append(text[last:start])
            last = end
        kept.append(text[last:])
        return " ".join("".join(kept).split())

    def __call__(self, texts: list[str]) -> list[str]:
        return [self.mask(t) for t in texts]


def _phrase(entry: str) -> tuple[str, ...]:
    """An entry's folded words, without a leading article."""
    words = _TOKEN.findall(fold(entry)[0])
    while len(words) > 1 and words[0] in _ARTICLES:
        words = words[1:]
    return tuple(words)
