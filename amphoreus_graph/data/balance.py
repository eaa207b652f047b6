"""Preference pairs balanced by act: every action is chosen exactly as often as it is rejected.

When the judges prefer some acts whatever the agent's Path (aid over withdraw, say), a model learns that prior
from the pairs without reading the prompt: the act alone tells chosen from rejected. Kept balanced, the act says
nothing on its own, and what is left to learn is when the Path makes an act the better one.

A judged turn offers several pairs the panels separate by the margin (its best over its worst first, then the
others by margin); at most one is kept. A pair is an edge from its chosen act to its rejected act, and the pairs
kept are balanced when every act has as many edges out as in. A greedy pass starts from each turn's first pair
and, while some act is out of balance, makes the move that brings the acts closest to balance: another pair of
the same turn, else leaving a turn out (its least decided pair first). Not always the fewest turns left out,
but a turn is only left out when no other pair of it would do. A pinned turn (a human's verdict) is never moved:
the others balance around it as far as they can, and what stays out of balance is reported.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel

Row = dict[str, Any]
Act = Callable[[Row, str], str]


class Balanced(BaseModel):
    rows: list[Row]
    left_out: int  # turns that kept no pair
    switched: int  # turns that kept another pair than their first
    unbalanced: int  # pairs still out of balance (only where pinned turns leave no way to balance them)


def balanced_by_act(turns: Sequence[Sequence[Row]], act: Act, pinned: Sequence[bool] = ()) -> Balanced:
    """At most one row per turn (each turn's rows in order of preference), every act chosen as often as
    rejected; `act(row, "chosen" | "rejected")` names a reply's act; a turn `pinned` keeps its first row."""
    edges = [[(act(row, "chosen"), act(row, "rejected")) for row in rows] for rows in turns]
    movable = [not (t < len(pinned) and pinned[t]) for t in range(len(turns))]
    pick: list[int | None] = [0 if rows else None for rows in turns]
    surplus: Counter[str] = Counter()
    for t, choice in enumerate(pick):
        if choice is not None:
            _shift(surplus, edges[t][choice], +1)
    while any(s != 0 for s in surplus.values()):
        move = _best_move(turns, edges, [p if m else None for p, m in zip(pick, movable, strict=True)], surplus)
        if move is None:
            break
        t, choice = move
        current = pick[t]
        assert current is not None
        _shift(surplus, edges[t][current], -1)
        if choice is not None:
            _shift(surplus, edges[t][choice], +1)
        pick[t] = choice
    kept = [turns[t][choice] for t, choice in enumerate(pick) if choice is not None]
    return Balanced(
        rows=kept,
        left_out=sum(1 for t, choice in enumerate(pick) if choice is None and turns[t]),
        switched=sum(1 for choice in pick if choice not in (None, 0)),
        unbalanced=sum(s for s in surplus.values() if s > 0),
    )


def _best_move(
    turns: Sequence[Sequence[Row]], edges: list[list[tuple[str, str]]], pick: list[int | None], surplus: Counter[str]
) -> tuple[int, int | None] | None:
    """The move that lowers the total imbalance most: switching a turn to another of its pairs (only if that
    lowers it), else leaving out a turn whose chosen act is in surplus (which never raises it; the least decided
    first); None when no turn can move. Each leaving-out removes a pair for good, so the pass ends."""
    best: tuple[int, int, float, str, int, int] | None = None  # the move's sort key; choice -1: leave the turn out
    for t, current in enumerate(pick):
        if current is None:
            continue
        old = edges[t][current]
        if not (surplus[old[0]] or surplus[old[1]]):  # leaving a balanced pair can only unbalance its acts
            continue
        for choice in range(len(edges[t])):
            if choice != current:
                gain = _gain(surplus, old, edges[t][choice])
                if gain > 0:
                    key = (-gain, 0, -_margin(turns[t][choice]), str(turns[t][choice].get("id")), t, choice)
                    best = key if best is None or key < best else best
        if surplus[old[0]] > 0 and old[0] != old[1]:
            gain = _gain(surplus, old, None)
            key = (-gain, 1, _margin(turns[t][current]), str(turns[t][current].get("id")), t, -1)
            best = key if best is None or key < best else best
    if best is None:
        return None
    return best[4], (None if best[5] < 0 else best[5])


def _gain(surplus: Counter[str], old: tuple[str, str], new: tuple[str, str] | None) -> int:
    """How much the total imbalance falls when pair `old` gives way to `new` (None: to nothing)."""
    after = {a: surplus[a] for a in (*old, *(new or ()))}
    for edge, sign in ((old, -1), (new, +1)):
        if edge is not None and edge[0] != edge[1]:
            after[edge[0]] += sign
            after[edge[1]] -= sign
    return sum(abs(surplus[a]) - abs(v) for a, v in after.items())


def _shift(surplus: Counter[str], edge: tuple[str, str], sign: int) -> None:
    chosen, rejected = edge
    if chosen != rejected:
        surplus[chosen] += sign
        surplus[rejected] -= sign


def _margin(row: Row) -> float:
    return float(row.get("margin") or 0.0)
