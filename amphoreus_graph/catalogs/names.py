"""What a name may be: the rules a scenario's names of things (agents, places, objectives) are loaded under.

A name is data: it reaches prompts, samples, ids and error lines as it is, so it must read as one visible line.
A name is refused when it holds
- a control character, a surrogate, or a line or paragraph separator (`\\n`, `\\r`, `\\t`, U+0085, U+2028,
  U+2029…): in a prompt it would start a line of its own (a fake "You remember:" line, say);
- nothing visible: empty once normalised (NFKC), its invisible format characters (U+200B zero-width space,
  U+2060, the BOM…) dropped and the whitespace around it stripped.

Two agents' names are refused as ambiguous when they are equal once normalised for comparison (`name_key`: NFKC,
case folded, format characters dropped, whitespace runs as one space and none around): `Corin` and
`Corin\\u200b`, `ｃ` and `c`, `Zoé` typed composed and decomposed, `Zoe` and `zoe`. They would be two
identities to memory that a reader, or a model, cannot tell apart. Names that differ visibly (`Zoé`, `Zoë`,
`Zo e`) stay apart. Error lines show names with `ascii()` (`shown`), so look-alikes show their difference.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

_BREAKING = frozenset({"Cc", "Cs", "Zl", "Zp"})  # control, surrogate, line and paragraph separators


def name_problem(name: str) -> str | None:
    """Why a name cannot be used, in words (None: it can)."""
    if any(unicodedata.category(ch) in _BREAKING for ch in name):
        return "it holds a control character or a line break; expected a name on one line"
    if not _visible(name).strip():
        return "it is empty once normalised (NFKC, invisible characters and outer whitespace dropped)"
    return None


def name_key(name: str) -> str:
    """What two names are compared by: NFKC, case folded, format characters dropped, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", _visible(name)).casefold())
    return " ".join(folded.split())


def ambiguous(names: Iterable[str]) -> list[str]:
    """The names (each once, in order) that share their `name_key` with another name of the list (or repeat)."""
    names = list(names)
    keys = [name_key(n) for n in names]
    return list(dict.fromkeys(n for n, key in zip(names, keys, strict=True) if keys.count(key) > 1))


def shown(names: Iterable[str]) -> str:
    """Names for an error line, each as `ascii()` writes it: look-alikes show how they differ."""
    return ", ".join(ascii(n) for n in names)


AMBIGUOUS = "equal once normalised: NFKC, case, invisible characters and spacing ignored"


def _visible(name: str) -> str:
    return "".join(ch for ch in unicodedata.normalize("NFKC", name) if unicodedata.category(ch) != "Cf")
