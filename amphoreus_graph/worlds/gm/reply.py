"""What a game master's reply must be: narrated events and typed state changes, checked by pydantic against the
world's names (validation context: the world's `Vocabulary`), so a reply that names an agent, place, stat or
status the world does not have is refused with a message precise enough for the model to repair it.

Changes that need the state to judge (ranges, who stands where) are checked as they are applied (`apply.py`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, FiniteFloat, ValidationInfo, model_validator
from pydantic_core import PydanticCustomError

from amphoreus_graph.worlds.kit import Status

if TYPE_CHECKING:
    from amphoreus_graph.worlds.gm.apply import Applier
    from amphoreus_graph.worlds.kit import KitWorld

# The states an objective may take, by how its kind is pursued (docs/worlds-kit.md, "Objectives").
STATUSES: dict[str, tuple[Status, ...]] = {
    "in_place": (Status.FREE, Status.LIT, Status.DOUSED, Status.LOST),
    "carried": (Status.FREE, Status.HELD, Status.DELIVERED, Status.LOST),
}


def problem(text: str) -> PydanticCustomError:
    """A validation error whose message is `text` as it is (braces in names stay braces)."""
    return PydanticCustomError("world", "{problem}", {"problem": text})


@dataclass(frozen=True)
class Vocabulary:
    """The names a reply may use, from one world: what its validators check against."""

    agents: tuple[str, ...]
    locations: tuple[str, ...]
    stats: tuple[str, ...]
    pools: tuple[str, ...]
    endings: tuple[str, ...]
    clock: bool
    clocks: tuple[str, ...]  # named clocks
    relations: tuple[str, ...]  # declared relations (trust is every world's)
    statuses: dict[str, dict[str, Status]]  # objective -> {its states' ids and the words its kind says them in}
    max_events: int
    max_changes: int

    @classmethod
    def of(cls, world: KitWorld, *, max_events: int, max_changes: int) -> Vocabulary:
        rules = world.rules
        statuses = {}
        for name in rules.objectives:
            kind = rules.kind(name)
            allowed = STATUSES[kind.mode]
            statuses[name] = {s.value: s for s in allowed} | {kind.words[s]: s for s in allowed if s in kind.words}
        return cls(
            agents=tuple(rules.agents),
            locations=tuple(rules.locations),
            stats=tuple(world.spec.stats),
            pools=tuple(world.spec.pools),
            endings=tuple(rules.endings),
            clock=world.spec.clock is not None,
            clocks=tuple(world.spec.clocks),
            relations=tuple(world.spec.relations),
            statuses=statuses,
            max_events=max_events,
            max_changes=max_changes,
        )

    def allowed(self, objective: str) -> list[str]:
        """An objective's states by their ids, in the kit's order."""
        return list(dict.fromkeys(s.value for s in self.statuses[objective].values()))


def _vocabulary(info: ValidationInfo) -> Vocabulary:
    if not isinstance(info.context, Vocabulary):
        raise TypeError("a game master's reply is validated with its world's Vocabulary as the context")
    return info.context


def _known(kind: str, field: str) -> AfterValidator:
    """A name that must be one of the vocabulary's `field` (e.g. the world's agents)."""

    def check(value: str, info: ValidationInfo) -> str:
        names: tuple[str, ...] = getattr(_vocabulary(info), field)
        if value not in names:
            raise problem(f"unknown {kind} {value!r}; expected one of {list(names)}")
        return value

    return AfterValidator(check)


def _objective(value: str, info: ValidationInfo) -> str:
    known = list(_vocabulary(info).statuses)
    if value not in known:
        raise problem(f"unknown objective {value!r}; expected one of {known}")
    return value


Agent = Annotated[str, _known("agent", "agents")]
Location = Annotated[str, _known("location", "locations")]
Stat = Annotated[str, _known("stat", "stats")]
Pool = Annotated[str, _known("pool", "pools")]
EndingId = Annotated[str, _known("ending", "endings")]
ClockName = Annotated[str, _known("clock", "clocks")]
RelationName = Annotated[str, _known("relation", "relations")]
Objective = Annotated[str, AfterValidator(_objective)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Event(_Strict):
    """Something that happened this round, as the game master tells it."""

    actor: Agent | None = Field(default=None, description="whose deed it is; none: the world's own doing")
    text: str = Field(min_length=1, max_length=2000)
    involved: list[Agent] = Field(default_factory=list, max_length=50, description="others it touched")
    public: bool = Field(default=False, description="known to everyone, not only to those there")
    importance: float = Field(default=3.0, ge=1, le=10)

    @model_validator(mode="after")
    def _witnessed(self) -> Event:
        if self.actor is None and not self.public and not self.involved:
            raise problem("an event with no actor must be public or involve someone, or nobody would know of it")
        return self


class Move(_Strict):
    type: Literal["move"]
    agent: Agent
    to: Location

    def apply(self, a: Applier) -> str | None:
        return a.move(self.agent, self.to)


class StatChange(_Strict):
    type: Literal["stat"]
    agent: Agent
    stat: Stat
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.stat(self.agent, self.stat, self.delta)


class TrustChange(_Strict):
    type: Literal["trust"]
    agent: Agent = Field(description="whose trust changes")
    towards: Agent
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.relation("trust", self.agent, self.towards, self.delta)


class RelationChange(_Strict):
    type: Literal["relation"]
    relation: RelationName
    agent: Agent = Field(description="who holds it: the debtor of a debt, the follower")
    towards: Agent
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.relation(self.relation, self.agent, self.towards, self.delta)


class ClockChange(_Strict):
    type: Literal["clock"]
    name: ClockName | None = Field(default=None, description="a named clock; none: the world's clock")
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.clock(self.name, self.delta)

    @model_validator(mode="after")
    def _has_clock(self, info: ValidationInfo) -> ClockChange:
        if self.name is None and not _vocabulary(info).clock:
            raise problem("this world has no clock")
        return self


class PoolChange(_Strict):
    type: Literal["pool"]
    pool: Pool
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.pool(self.pool, self.delta)


class ObjectiveChange(_Strict):
    type: Literal["objective"]
    objective: Objective
    status: str
    holder: Agent | None = Field(default=None, description="held: who carries it; lit/delivered: who did it")
    at: Location | None = Field(default=None, description="free: where it lies")

    @model_validator(mode="after")
    def _fits(self, info: ValidationInfo) -> ObjectiveChange:
        names = _vocabulary(info).statuses[self.objective]
        if self.status not in names:
            allowed = _vocabulary(info).allowed(self.objective)
            raise problem(f"the {self.objective} cannot be {self.status!r}; expected one of {allowed}")
        self.status = names[self.status].value
        if self.status in (Status.HELD, Status.DELIVERED) and self.holder is None:
            raise problem(f"status {self.status} needs a holder (the agent who carries or delivered it)")
        if self.holder is not None and self.status not in (Status.HELD, Status.DELIVERED, Status.LIT):
            raise problem(f"status {self.status} has no holder; leave 'holder' out")
        if self.at is not None and self.status != Status.FREE:
            raise problem("'at' is only for status free (where it lies); leave it out")
        return self

    def apply(self, a: Applier) -> str | None:
        return a.objective(self.objective, Status(self.status), self.holder, self.at)


class TallyChange(_Strict):
    type: Literal["tally"]
    agent: Agent
    delta: FiniteFloat

    def apply(self, a: Applier) -> str | None:
        return a.tally(self.agent, self.delta)


class EndChange(_Strict):
    type: Literal["end"]
    ending: EndingId

    def apply(self, a: Applier) -> str | None:
        return a.end(self.ending)


Change = Annotated[
    Move
    | StatChange
    | TrustChange
    | RelationChange
    | ClockChange
    | PoolChange
    | ObjectiveChange
    | TallyChange
    | EndChange,
    Field(discriminator="type"),
]


class Reply(_Strict):
    """One round resolved: what happened, and what it changed (applied in order)."""

    events: list[Event] = Field(default_factory=list)
    changes: list[Change] = Field(default_factory=list)

    @model_validator(mode="after")
    def _within_limits(self, info: ValidationInfo) -> Reply:
        vocabulary = _vocabulary(info)
        if len(self.events) > vocabulary.max_events:
            raise problem(f"{len(self.events)} events; expected at most {vocabulary.max_events}")
        if len(self.changes) > vocabulary.max_changes:
            raise problem(f"{len(self.changes)} changes; expected at most {vocabulary.max_changes}")
        return self
