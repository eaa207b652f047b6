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
from collections.abc import Callable, Iterator, Sequence
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
    balancer = _Balancer(turns, act, pinned)
    while any(balancer.surplus.values()):
        if balancer.switch_sweep():
            continue
        if not balancer.leave_out():
            break  # only pinned turns are left out of balance
    return balancer.result()


class _Balancer:
    """The greedy pass's state: each turn's pairs as (chosen act, rejected act) edges, the pair each turn keeps
    (None: left out), and each act's surplus of times chosen over times rejected."""

    def __init__(self, turns: Sequence[Sequence[Row]], act: Act, pinned: Sequence[bool]) -> None:
        self.turns = turns
        self.edges = [[(act(row, "chosen"), act(row, "rejected")) for row in rows] for rows in turns]
        self.pick: list[int | None] = [0 if rows else None for rows in turns]
        self.surplus: Counter[str] = Counter()
        for t, choice in enumerate(self.pick):
            if choice is not None:
                _shift(self.surplus, self.edges[t][choice], +1)
        movable = [t for t in range(len(turns)) if turns[t] and not (t < len(pinned) and pinned[t])]
        self.movable = sorted(movable, key=lambda t: (_margin(turns[t][0]), str(turns[t][0].get("id"))))

    def switch_sweep(self) -> bool:
        """One pass over the turns, the least decided first: each switches to the other pair of it that lowers
        the imbalance most (widest margin on a tie), if any does. Whether any switched."""
        switched = False
        for t, old in self._kept():
            if not (self.surplus[old[0]] or self.surplus[old[1]]):  # leaving a balanced pair only unbalances
                continue
            others = [c for c in range(len(self.edges[t])) if c != self.pick[t]]
            if not others:
                continue
            choice = max(others, key=lambda c: (_gain(self.surplus, old, self.edges[t][c]), self._margin(t, c), -c))
            if _gain(self.surplus, old, self.edges[t][choice]) > 0:
                self._move(t, choice)
                switched = True
        return switched

    def leave_out(self) -> bool:
        """Leave out, least decided first, every turn whose pair takes an act in surplus to one in deficit; if
        there is none, the first turn whose chosen act is in surplus (it moves the surplus on). Whether any was."""
        left = False
        for t, (chosen, rejected) in self._kept():
            if chosen != rejected and self.surplus[chosen] > 0 and self.surplus[rejected] < 0:
                self._move(t, None)
                left = True
        if left:
            return True
        for t, (chosen, rejected) in self._kept():
            if chosen != rejected and self.surplus[chosen] > 0:
                self._move(t, None)
                return True
        return False

    def result(self) -> Balanced:
        pick = self.pick
        return Balanced(
            rows=[self.turns[t][choice] for t, choice in enumerate(pick) if choice is not None],
            left_out=sum(1 for t, choice in enumerate(pick) if choice is None and self.turns[t]),
            switched=sum(1 for choice in pick if choice not in (None, 0)),
            unbalanced=sum(s for s in self.surplus.values() if s > 0),
        )

    def _kept(self) -> Iterator[tuple[int, tuple[str, str]]]:
        """The movable turns that still keep a pair, with that pair's edge, as the sweep reaches them."""
        for t in self.movable:
            if (current := self.pick[t]) is not None:
                yield t, self.edges[t][current]

    def _margin(self, t: int, choice: int) -> float:
        return _margin(self.turns[t][choice])

    def _move(self, t: int, choice: int | None) -> None:
        current = self.pick[t]
        assert current is not None
        _shift(self.surplus, self.edges[t][current], -1)
        if choice is not None:
            _shift(self.surplus, self.edges[t][choice], +1)
        self.pick[t] = choice


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
