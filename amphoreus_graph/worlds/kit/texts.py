"""Texts a kit world composes: templates filled with the moment's values, numbers as the world shows them."""

from __future__ import annotations

import functools
import string
from collections.abc import Iterable
from typing import Any


def num(value: float) -> str:
    """A number as the world shows it: 12, 2.5, 0.33 (never 12.0)."""
    rounded = round(float(value), 2)
    return str(int(rounded)) if rounded == int(rounded) else f"{rounded:.2f}".rstrip("0").rstrip(".")


def placeholders(template: str) -> list[str]:
    """The field names a template uses (raises ValueError on a malformed one)."""
    names = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field is not None:
            names.append(field.split(".", 1)[0].split("[", 1)[0])
    return names


@functools.lru_cache(maxsize=4096)
def names_in(template: str) -> frozenset[str]:
    """Every name a template's filling reads, those in its format specs included ("" for a malformed one: it
    names nothing it can be filled with)."""
    found: set[str] = set()
    try:
        for _, field, spec, _ in string.Formatter().parse(template):
            if field is not None:
                found.add(field.split(".", 1)[0].split("[", 1)[0])
            if spec:
                found |= names_in(spec)
    except ValueError:
        return frozenset()
    return frozenset(found)


class _Formatter(string.Formatter):
    """Numbers without a format spec are shown as the world shows them (`num`); `{fish:.0f}` works too;
    a name the template uses but the moment does not have is shown as nothing."""

    def get_value(self, key: int | str, args: Any, kwargs: Any) -> Any:
        return kwargs.get(key, "") if isinstance(key, str) else ""

    def format_field(self, value: Any, format_spec: str) -> str:
        if not format_spec and isinstance(value, int | float) and not isinstance(value, bool):
            return num(value)
        if format_spec and not (isinstance(value, int | float) and not isinstance(value, bool)):
            return str(value)
        return format(value, format_spec)


_FORMATTER = _Formatter()


def fmt(template: str, values: dict[str, Any]) -> str:
    """Fill a template with the moment's values, spaces collapsed."""
    return " ".join(_FORMATTER.vformat(template, (), values).split())


def check_template(template: str, allowed: Iterable[str]) -> str | None:
    """Why a template cannot be filled (None: it can): a malformed brace, an unknown name, a bad spec."""
    allowed = set(allowed)
    try:
        names = placeholders(template)
    except ValueError as exc:
        return f"malformed template ({exc}); expected text with {{placeholders}}"
    for name in names:
        if name not in allowed:
            return f"unknown placeholder {{{name}}}; expected one of {sorted(allowed)}"
    try:
        _FORMATTER.vformat(template, (), dict.fromkeys(allowed, 1.5))
    except (ValueError, TypeError, IndexError, KeyError, AttributeError) as exc:
        return f"bad format spec ({exc}); expected e.g. {{name}} or {{name:.0f}}"
    return None
