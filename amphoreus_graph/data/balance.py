"""Preference pairs balanced by act: every action is chosen exactly as often as it is rejected.

When the judges prefer some acts whatever the agent's Path (aid over withdraw, say), a model learns that prior
from the pairs without reading the prompt: the act alone tells chosen from rejected. Kept balanced, the act says
nothing on its own, and what is left to learn is when the Path makes an act the better one.

A judged turn offers several pairs the panels separate by the margin (its best over its worst first, then the
others by margin); at most one is kept. A pair is an edge from its chosen act to its rejected act, and the pairs
kept are balanced when every act has as many edges out as in. A greedy pass starts from each turn's first pair;
while some act is out of balance it sweeps the turns, the least decided first, switching each to the other pair
of it that lowers the imbalance most (if one does); when no switch helps it leaves turns out, first those whose
pair takes an act in surplus to one in deficit. Not always the fewest turns left out, but linear in the turns
per sweep. A pinned turn (a human's verdict) is never moved: the others balance around it as far as they can,
and what stays out of balance is reported.
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
    pick: list[int | None] = [0 if rows else None for rows in turns]
    surplus: Counter[str] = Counter()
    for t, choice in enumerate(pick):
        if choice is not None:
            _shift(surplus, edges[t][choice], +1)
    movable = [t for t in range(len(turns)) if turns[t] and not (t < len(pinned) and pinned[t])]
    movable.sort(key=lambda t: (_margin(turns[t][0]), str(turns[t][0].get("id"))))  # the least decided first

    def move(t: int, choice: int | None) -> None:
        current = pick[t]
        assert current is not None
        _shift(surplus, edges[t][current], -1)
        if choice is not None:
            _shift(surplus, edges[t][choice], +1)
        pick[t] = choice

    while any(surplus.values()):
        if _switch_sweep(turns, edges, pick, surplus, movable, move):
            continue
        if not _leave_out(edges, pick, surplus, movable, move):
            break  # only pinned turns are left out of balance
    kept = [turns[t][choice] for t, choice in enumerate(pick) if choice is not None]
    return Balanced(
        rows=kept,
        left_out=sum(1 for t, choice in enumerate(pick) if choice is None and turns[t]),
        switched=sum(1 for choice in pick if choice not in (None, 0)),
        unbalanced=sum(s for s in surplus.values() if s > 0),
    )


def _switch_sweep(
    turns: Sequence[Sequence[Row]],
    edges: list[list[tuple[str, str]]],
    pick: list[int | None],
    surplus: Counter[str],
    movable: list[int],
    move: Callable[[int, int | None], None],
) -> bool:
    """One pass over the turns: each switches to the other pair of it that lowers the imbalance most (widest
    margin on a tie), if any does. Whether any switched."""
    switched = False
    for t in movable:
        current = pick[t]
        if current is None:
            continue
        old = edges[t][current]
        if not (surplus[old[0]] or surplus[old[1]]):  # leaving a balanced pair can only unbalance its acts
            continue
        gains = [(_gain(surplus, old, edges[t][c]), _margin(turns[t][c]), -c) for c in range(len(edges[t]))]
        gain, _, choice = max(g for g in gains if g[2] != -current) if len(gains) > 1 else (0, 0.0, 0)
        if gain > 0:
            move(t, -choice)
            switched = True
    return switched


def _leave_out(
    edges: list[list[tuple[str, str]]],
    pick: list[int | None],
    surplus: Counter[str],
    movable: list[int],
    move: Callable[[int, int | None], None],
) -> bool:
    """Leave out, least decided first, every turn whose pair takes an act in surplus to one in deficit; if there
    is none, the first turn whose chosen act is in surplus (it moves the surplus on). Whether any was left out."""
    left = False
    for direct in (True, False):
        for t in movable:
            current = pick[t]
            if current is None:
                continue
            chosen, rejected = edges[t][current]
            if chosen != rejected and surplus[chosen] > 0 and (surplus[rejected] < 0 or not direct):
                move(t, None)
                left = True
                if not direct:
                    return True
        if left:
            return True
    return False


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
