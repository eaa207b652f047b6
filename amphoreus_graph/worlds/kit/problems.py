"""One mistake in a kit world's YAML, as the field it is in and what was expected there."""

from __future__ import annotations

from collections.abc import Iterable

from amphoreus_graph.catalogs.names import shown


class Problem(Exception):
    def __init__(self, field: str, expected: str) -> None:
        super().__init__(f"{field}: {expected}")
        self.field = field
        self.expected = expected


def one_of(kind: str, value: object, options: Iterable[str]) -> str:
    """Names shown with `ascii()`: a look-alike of a known name shows how it differs."""
    return f"unknown {kind} {value!a}; expected one of [{shown(sorted(options))}]"


def known(field: str, kind: str, value: str, options: Iterable[str]) -> None:
    options = list(options)
    if value not in options:
        raise Problem(field, one_of(kind, value, options))
