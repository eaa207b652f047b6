"""Filter semantics of LangGraph's InMemoryStore, shared by ChromaStore: value filters with $-operators,
and namespace prefix/suffix patterns with '*' wildcards. Pure functions, no storage."""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from langgraph.store.base import MatchCondition

_ORDER: dict[str, Callable[[float, float], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}


def value_matches(value: Mapping[str, Any], flt: dict[str, Any] | None) -> bool:
    """InMemoryStore's filter semantics: every field matches (nested dicts, lists, and $-operators)."""
    return not flt or all(_compare(value.get(field), expected) for field, expected in flt.items())


def _compare(actual: Any, expected: Any) -> bool:
    if isinstance(expected, dict):
        if any(k.startswith("$") for k in expected):
            return all(_apply(actual, op, operand) for op, operand in expected.items())
        return isinstance(actual, dict) and all(_compare(actual.get(k), v) for k, v in expected.items())
    if isinstance(expected, list | tuple):
        same_length = isinstance(actual, list | tuple) and len(actual) == len(expected)
        return same_length and all(_compare(a, e) for a, e in zip(actual, expected, strict=True))
    return bool(actual == expected)


def _apply(actual: Any, op: str, operand: Any) -> bool:
    if op == "$eq":
        return bool(actual == operand)
    if op == "$ne":
        return bool(actual != operand)
    if op not in _ORDER:
        raise ValueError(f"Unsupported operator: {op}")
    try:
        return _ORDER[op](float(actual), float(operand))
    except (TypeError, ValueError):  # a missing or non-numeric field is not greater or smaller than anything
        return False


def namespace_matches(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    """A prefix or suffix pattern, '*' matching any one label (InMemoryStore's rule)."""
    path = condition.path
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    elif condition.match_type == "suffix":
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    else:
        raise ValueError(f"Unsupported match type: {condition.match_type}")
    return all(p == "*" or k == p for k, p in pairs)
