"""A kit world's state: compact, JSON-able, validated back into these models inside every world method."""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from amphoreus_graph.worlds.kit.terms import Status

T = TypeVar("T")
_SEALED: dict[int, dict[str, Any]] = {}  # id of a sealed KitState -> what has been worked out of it, by key


class AgentState(BaseModel):
    at: str | None = Field(description="where the agent stands; None while en route")
    to: str | None = Field(default=None, description="where an agent en route is going")
    arrives: int | None = Field(default=None, description="the round at whose end it arrives")
    stats: dict[str, float] = Field(default_factory=dict)
    tally: float = 0.0
    fallen: bool = False

    @property
    def en_route(self) -> bool:
        return self.at is None


class ObjectiveState(BaseModel):
    status: Status = Status.FREE
    at: str | None = Field(default=None, description="where it lies; None while carried or gone")
    by: str | None = Field(default=None, description="its holder while held; who lit or delivered it")


class Post(BaseModel):
    """One post of a feed: written, replied, or reposted (`repost_of`, with the original's text)."""

    id: str
    author: str
    text: str
    round: int
    topic: str | None = None
    reply_to: str | None = None
    repost_of: str | None = None
    likes: list[str] = Field(default_factory=list)
    reposts: int = 0

    @property
    def popularity(self) -> int:
        return len(self.likes) + self.reposts


class Motion(BaseModel):
    """A proposal put to the vote: its text (the proposer's words), ballots, and the round it closes."""

    id: str
    author: str
    text: str
    round: int
    closes: int
    ayes: list[str] = Field(default_factory=list)
    nays: list[str] = Field(default_factory=list)
    outcome: str | None = Field(default=None, description="passed or failed, once decided")


class Offer(BaseModel):
    """A trade one agent offers another: what it gives and what it asks, open until accepted, declined or old."""

    id: str
    by: str
    to: str
    give: dict[str, float]
    get: dict[str, float]
    round: int
    status: str = Field(default="open", description="open, accepted, declined, failed or expired")


class KitState(BaseModel):
    """One cycle of a kit world. `active` lists the thresholds in force (their standing effects apply)."""

    cycle: int
    round: int = 0
    agents: dict[str, AgentState]
    objectives: dict[str, ObjectiveState] = Field(default_factory=dict)
    clock: float | None = None
    pools: dict[str, float] = Field(default_factory=dict)
    trust: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="who trusts whom how far, where not 0 (kept sparse: it grows with N²)"
    )
    clocks: dict[str, float] = Field(default_factory=dict, description="the named clocks (clocks:)")
    relations: dict[str, dict[str, dict[str, float]]] = Field(
        default_factory=dict, description="relation -> holder -> other -> value, where not 0 (sparse, like trust)"
    )
    posts: list[Post] = Field(default_factory=list)
    reached: dict[str, list[str]] = Field(
        default_factory=dict, description="topic -> the agents whose feed has shown a post of it (the spread)"
    )
    motions: list[Motion] = Field(default_factory=list)
    offers: list[Offer] = Field(default_factory=list)
    items: int = Field(default=0, description="ids given so far to posts, motions and offers (#1, #2…)")
    active: list[str] = Field(default_factory=list)
    fired: list[str] = Field(default_factory=list, description="triggers that fired this cycle")
    outcome: str | None = None
    limit: int | None = Field(default=None, description="the round limit the engine resolves the cycle under")

    def dump(self) -> dict[str, object]:
        return self.model_dump(mode="json", exclude_defaults=True) | {"cycle": self.cycle, "round": self.round}

    def seal(self) -> KitState:
        """Mark this state as only read from now on (every agent's perception of one round reads the same one), so
        that what is asked of the whole society (who stands where, who carries what, a feed's ranking) is worked
        out once, on first asking, and shared: each agent's perception then costs what it sees, not the society's
        size. Kept beside the state, not in it (its fields, copies and equality are untouched); a copy of a sealed
        state is not sealed, and a sealed state changed in place would answer stale."""
        if id(self) not in _SEALED:
            _SEALED[id(self)] = {}
            weakref.finalize(self, _SEALED.pop, id(self), None)
        return self

    def derived(self, key: str, build: Callable[[], T]) -> T:
        """`build()`, kept under `key` while this state is sealed (built afresh every time otherwise)."""
        found = _SEALED.get(id(self))
        if found is None:
            return build()
        if key not in found:
            found[key] = build()
        kept: T = found[key]
        return kept

    def standing(self) -> list[str]:
        """Agents who have not fallen, in declaration order."""
        return list(self.derived("standing", lambda: [name for name, agent in self.agents.items() if not agent.fallen]))

    def present(self, location: str | None) -> list[str]:
        """Standing agents at a location (never those en route), in declaration order."""
        if location is None:
            return []
        return list(self.derived("present", self._by_place).get(location, ()))

    def _by_place(self) -> dict[str, list[str]]:
        places: dict[str, list[str]] = {}
        for name, a in self.agents.items():
            if a.at is not None and not a.fallen:
                places.setdefault(a.at, []).append(name)
        return places

    def held_by(self, agent: str) -> list[str]:
        return [name for name, o in self.objectives.items() if o.status is Status.HELD and o.by == agent]

    def carried(self) -> dict[str, list[str]]:
        """`held_by` of every agent who holds something, in one pass over the objectives (for a caller asking it of
        many agents; the caller does not change it)."""
        return self.derived("carried", self._carried)

    def _carried(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for name, o in self.objectives.items():
            if o.status is Status.HELD and o.by is not None:
                out.setdefault(o.by, []).append(name)
        return out

    def trust_of(self, truster: str, trusted: str) -> float:
        return self.trust.get(truster, {}).get(trusted, 0.0)

    def trust_row(self, truster: str) -> dict[str, float]:
        """How far `truster` trusts every other agent, in declaration order (0 where nothing was said)."""
        row = self.trust.get(truster, {})
        found = dict(self.derived("nobody trusted", lambda: dict.fromkeys(self.agents, 0.0)))  # copied in C
        found.pop(truster, None)
        found.update((other, value) for other, value in row.items() if other in found)
        return found

    def new_id(self) -> str:
        self.items += 1
        return f"#{self.items}"

    def relation_of(self, name: str, holder: str, other: str) -> float:
        return self.relations.get(name, {}).get(holder, {}).get(other, 0.0)

    def set_relation(self, name: str, holder: str, other: str, value: float) -> None:
        """Stored sparse: a value of 0 leaves no entry behind."""
        table = self.relations.setdefault(name, {})
        row = table.setdefault(holder, {})
        if value:
            row[other] = value
        else:
            row.pop(other, None)
        if not row:
            del table[holder]
        if not table:
            del self.relations[name]

    def adjust_trust(self, truster: str, trusted: str, delta: float) -> None:
        """Within [-1, 1]; nobody's trust in themself, nor in anyone not of the world."""
        if truster == trusted or truster not in self.agents or trusted not in self.agents or not delta:
            return
        value = round(max(-1.0, min(1.0, self.trust_of(truster, trusted) + delta)), 4)
        row = self.trust.setdefault(truster, {})
        if value:
            row[trusted] = value
        else:
            row.pop(trusted, None)
        if not row:
            del self.trust[truster]
