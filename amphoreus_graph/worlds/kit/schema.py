"""The rules kit's YAML schema: a world's map, stats, pools, clock, objectives, actions, agents and endings.

Every model forbids unknown keys, so a misspelt field is one error line naming it. Cross-references (an edge to
an unknown location, an effect naming an unknown pool, a threshold outside its gauge's range…) are checked in
`checks.py` once the shapes are valid. See docs/worlds-kit.md for the reference a world's author reads.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    field_validator,
    model_validator,
)

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.contracts.world import WorldLabels


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Status(StrEnum):
    """Where an objective stands: free (waiting where it is), held (carried by an agent), lit (claimed in
    place), doused (lit once, put out: it may be relit), delivered (brought home: done), lost (gone)."""

    FREE = "free"
    HELD = "held"
    LIT = "lit"
    DOUSED = "doused"
    DELIVERED = "delivered"
    LOST = "lost"


class Transition(StrEnum):
    """What can happen to an objective; each may declare its own text and effects (`transitions:`)."""

    SOUGHT = "sought"  # a claim that failed its chance
    CLAIMED = "claimed"  # a carried objective taken into hand (-> held)
    LIT = "lit"  # an in-place objective claimed for the first time (-> lit)
    RELIT = "relit"  # a doused one claimed again (-> lit)
    CONTESTED = "contested"  # each claimant who lost a contest (several claimed it in one round)
    DELIVERED = "delivered"  # a held objective brought to where it belongs (-> delivered)
    DOUSED = "doused"  # a lit one put out (-> doused)
    LOST = "lost"  # gone for the rest of the cycle (-> lost)
    TAKEN = "taken"  # wrested from its holder (-> held by the taker)
    DROPPED = "dropped"  # its holder fell and it lies where they fell (-> free)


class Who(StrEnum):
    """Whom an effect touches: the actor, the decision's target agent, the others at the actor's place,
    everyone there (actor included), or every standing agent."""

    ACTOR = "actor"
    TARGET = "target"
    OTHERS_HERE = "others_here"
    EVERYONE_HERE = "everyone_here"
    ALL = "all"


# ---------------------------------------------------------------------------------------------------- effects


class MoveArgs(_Strict):
    to: str | None = Field(default=None, description="a fixed destination; default: the decision's target")


class ObjectiveArgs(_Strict):
    objective: str | None = Field(default=None, description="a fixed objective; default: the decision's target")


class DouseArgs(ObjectiveArgs):
    chance: float = Field(default=1.0, ge=0, le=1)


class TakeArgs(_Strict):
    chance: float = Field(default=1.0, ge=0, le=1)


class AmountArgs(_Strict):
    amount: float = Field(gt=0)
    stat: str | None = Field(default=None, description="default: the world's vital stat")
    who: Who = Who.TARGET


class ShieldArgs(_Strict):
    who: Literal["actor", "target"] = "target"
    factor: float = Field(default=0.5, ge=0, le=1, description="harm to the shielded is multiplied by this")


class StatArgs(_Strict):
    name: str
    delta: float
    who: Who = Who.ACTOR


class TrustArgs(_Strict):
    target: float = Field(default=0.0, ge=-2, le=2, description="the target's trust in the actor")
    actor: float = Field(default=0.0, ge=-2, le=2, description="the actor's trust in the target")
    bystanders: float = Field(default=0.0, ge=-2, le=2, description="others at the actor's place, in the actor")
    everyone: float = Field(default=0.0, ge=-2, le=2, description="every other agent's trust in the actor")
    mutual: float | None = Field(
        default=None, ge=-2, le=2, description="if the target chose the same action at the actor: both ways"
    )


class DeltaArgs(_Strict):
    delta: float


class PoolArgs(_Strict):
    name: str
    delta: float


class HarvestArgs(_Strict):
    pool: str
    amount: float = Field(gt=0, description="what the actor takes, at most what the pool holds")
    into: str | None = Field(default=None, description="a stat of the actor's that receives the catch")
    tally: bool = Field(default=True, description="the catch counts towards the actor's tally")


class BumpArgs(_Strict):
    amount: float


class EndArgs(_Strict):
    outcome: str


class ChanceArgs(_Strict):
    p: float = Field(ge=0, le=1)
    stat: str | None = Field(default=None, description="the actor's stat that raises the chance")
    per_point: float = Field(default=0.0, description="chance added per point of that stat")
    then: list[Effect] = Field(default_factory=list)
    otherwise: list[Effect] = Field(default_factory=list)
    text: str | None = Field(default=None, description="replaces the action's text when the chance succeeds")
    else_text: str | None = Field(default=None, description="replaces the action's text when it fails")


class Move(_Strict):
    move: MoveArgs


class Claim(_Strict):
    claim: ObjectiveArgs


class Deliver(_Strict):
    deliver: ObjectiveArgs


class Douse(_Strict):
    douse: DouseArgs


class Lose(_Strict):
    lose: ObjectiveArgs


class Take(_Strict):
    take: TakeArgs


class Harm(_Strict):
    harm: AmountArgs


class Heal(_Strict):
    heal: AmountArgs


class Shield(_Strict):
    shield: ShieldArgs


class StatChange(_Strict):
    stat: StatArgs


class TrustChange(_Strict):
    trust: TrustArgs


class ClockChange(_Strict):
    clock: DeltaArgs


class PoolChange(_Strict):
    pool: PoolArgs


class Harvest(_Strict):
    harvest: HarvestArgs


class TallyChange(_Strict):
    tally: DeltaArgs


class Bump(_Strict):
    bump: BumpArgs


class NoArgs(_Strict):
    pass


class Announce(_Strict):
    announce: NoArgs


class End(_Strict):
    end: EndArgs


class Chance(_Strict):
    chance: ChanceArgs


EFFECTS: dict[str, type[_Strict]] = {
    "move": Move,
    "claim": Claim,
    "deliver": Deliver,
    "douse": Douse,
    "lose": Lose,
    "take": Take,
    "harm": Harm,
    "heal": Heal,
    "shield": Shield,
    "stat": StatChange,
    "trust": TrustChange,
    "clock": ClockChange,
    "pool": PoolChange,
    "harvest": Harvest,
    "tally": TallyChange,
    "bump": Bump,
    "announce": Announce,
    "end": End,
    "chance": Chance,
}
# A scalar after an effect's key fills this field: `harm: 2` is `harm: {amount: 2}`.
SHORTHAND: dict[str, str] = {
    "move": "to",
    "claim": "objective",
    "deliver": "objective",
    "douse": "objective",
    "lose": "objective",
    "take": "chance",
    "harm": "amount",
    "heal": "amount",
    "shield": "factor",
    "clock": "delta",
    "tally": "delta",
    "bump": "amount",
    "end": "outcome",
}


def _effect_key(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in EFFECTS else None
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


def _normalise(value: Any) -> Any:
    """`- move` is `{move: {}}`, `{harm: 2}` is `{harm: {amount: 2}}`, `{claim: null}` is `{claim: {}}`."""
    if isinstance(value, str) and value in EFFECTS:
        return {value: {}}
    if isinstance(value, dict) and len(value) == 1:
        key, args = next(iter(value.items()))
        if args is None:
            return {key: {}}
        if key in SHORTHAND and not isinstance(args, dict | list):
            return {key: {SHORTHAND[key]: args}}
    return value


_Tagged = Annotated[
    Annotated[Move, Tag("move")]
    | Annotated[Claim, Tag("claim")]
    | Annotated[Deliver, Tag("deliver")]
    | Annotated[Douse, Tag("douse")]
    | Annotated[Lose, Tag("lose")]
    | Annotated[Take, Tag("take")]
    | Annotated[Harm, Tag("harm")]
    | Annotated[Heal, Tag("heal")]
    | Annotated[Shield, Tag("shield")]
    | Annotated[StatChange, Tag("stat")]
    | Annotated[TrustChange, Tag("trust")]
    | Annotated[ClockChange, Tag("clock")]
    | Annotated[PoolChange, Tag("pool")]
    | Annotated[Harvest, Tag("harvest")]
    | Annotated[TallyChange, Tag("tally")]
    | Annotated[Bump, Tag("bump")]
    | Annotated[Announce, Tag("announce")]
    | Annotated[End, Tag("end")]
    | Annotated[Chance, Tag("chance")],
    Discriminator(
        _effect_key,
        custom_error_type="effect",
        custom_error_message=f"expected one effect: a mapping with one key from [{', '.join(EFFECTS)}]",
    ),
]
Effect = Annotated[_Tagged, BeforeValidator(_normalise)]
ChanceArgs.model_rebuild()


# ------------------------------------------------------------------------------------------------ conditions


class Range(_Strict):
    """Inclusive bounds; either may be left out."""

    min: float | None = None
    max: float | None = None

    def holds(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


class Condition(_Strict):
    """When an action is offered (or a pressure applies): every field given must hold for the actor."""

    holding: bool | None = Field(default=None, description="true: holds some objective; false: holds none")
    at: list[str] | None = Field(default=None, description="the actor stands at one of these locations")
    stat: dict[str, Range] = Field(default_factory=dict, description="the actor's stats")
    clock: Range | None = None
    pool: dict[str, Range] = Field(default_factory=dict)
    objective_here: list[Status] | None = Field(
        default=None, description="an objective in one of these states lies where the actor stands"
    )
    round: Range | None = None


class TargetFilter(_Strict):
    """Which targets an action offers, beyond its kind and reach."""

    self_: bool = Field(default=False, alias="self", description="an agent action may target its own actor")
    holding: bool | None = Field(default=None, description="agent targets that hold (true) / hold no objective")
    status: list[Status] | None = Field(default=None, description="objective targets in these states")
    kinds: list[str] | None = Field(default=None, description="objective targets of these kinds")


class PressureRule(_Strict):
    when: Condition
    add: float = Field(ge=-1, le=1)


class ActionDecl(_Strict):
    """One action, as one YAML entry."""

    name: str = Field(min_length=1)
    target: TargetKind = TargetKind.NONE
    help: str = ""
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(default=3.0, ge=1, le=10)
    reach: Reach = Reach.HERE
    verb: str = ""
    affinity: dict[str, float] = Field(default_factory=dict)
    text: str | None = Field(default=None, description="the event's narration: '{actor} lit the {objective}.'")
    public: bool = False
    when: Condition | None = None
    cost: dict[str, float] = Field(default_factory=dict, description="stat -> what the action costs the actor")
    targets: TargetFilter = TargetFilter()
    effects: list[Effect] = Field(default_factory=list)
    resolver: str | None = Field(default=None, description="file.py:function beside the YAML, or module:function")
    pressure: list[PressureRule] = Field(default_factory=list)

    @field_validator("affinity")
    @classmethod
    def _affinity_range(cls, value: dict[str, float]) -> dict[str, float]:
        bad = {k: v for k, v in value.items() if not -1.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"affinities must lie in [-1, 1], got {bad}")
        return value

    @field_validator("cost")
    @classmethod
    def _cost_positive(cls, value: dict[str, float]) -> dict[str, float]:
        if bad := {k: v for k, v in value.items() if v < 0}:
            raise ValueError(f"costs must not be negative, got {bad}")
        return value


# ------------------------------------------------------------------------------------------ map and numbers


class Location(_Strict):
    name: str = Field(min_length=1)
    description: str = ""
    situations: list[str] = Field(default_factory=list, description="this place's own situation templates")


class Edge(_Strict):
    between: list[str] = Field(min_length=2, max_length=2)
    time: int = Field(default=1, ge=1, description="rounds the journey takes")
    one_way: bool = Field(default=False, description="only from the first location to the second")
    open: bool = Field(default=True, description="false: closed until a threshold opens it")


class Stat(_Strict):
    """A number every agent has (health, oil, insight…), in its own range."""

    label: str | None = None
    start: float
    min: float = 0.0
    max: float
    vital: bool = Field(default=False, description="an agent whose vital stat reaches its min has fallen")
    shown: bool = Field(default=True, description="shown in status lines and the dashboard")

    @model_validator(mode="after")
    def _range(self) -> Stat:
        _check_range(self.start, self.min, self.max)
        return self


class Threshold(_Strict):
    """Fires when its gauge crosses `at` (up: rising to or past it; down: falling to or below it). While it
    holds (or forever after, if sticky) its standing effects apply: closed/opened edges, extra costs, actions
    forbidden. When it fires: its text (filed for everyone), its one-off effects, its ending if any."""

    at: float
    direction: Literal["up", "down"] = "up"
    sticky: bool = False
    text: str = ""
    close: list[list[str]] = Field(default_factory=list, description="edges closed: [[from, to], …]")
    open: list[list[str]] = Field(default_factory=list, description="closed edges opened: [[from, to], …]")
    costs: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="action (or '*') -> stat -> extra cost"
    )
    forbid: list[str] = Field(default_factory=list, description="actions no longer offered")
    effects: list[Effect] = Field(default_factory=list)
    end: str | None = Field(default=None, description="an ending's id: the cycle ends when this fires")

    def holds(self, value: float) -> bool:
        return value >= self.at if self.direction == "up" else value <= self.at


class Regrowth(_Strict):
    kind: Literal["logistic", "linear"] = "logistic"
    rate: float = Field(description="logistic: growth rate r in x += r·x·(1 − x/K); linear: amount per round")
    capacity: float | None = Field(default=None, description="logistic K; default: the pool's max")


class Pool(_Strict):
    """A shared stock of the world (fish in the bay, grain in the store)."""

    label: str | None = None
    start: float
    min: float = 0.0
    max: float
    regrowth: Regrowth | None = None
    thresholds: list[Threshold] = Field(default_factory=list)

    @model_validator(mode="after")
    def _range(self) -> Pool:
        _check_range(self.start, self.min, self.max)
        return self


class Clock(_Strict):
    """The world's clock or calamity: a number in its own range that rises (or falls) round by round."""

    label: str = "clock"
    start: float = 0.0
    min: float = 0.0
    max: float
    rise_per_round: float = 0.0
    on_transition: dict[Transition, float] = Field(default_factory=dict, description="e.g. {doused: 2}")
    on_action: dict[str, float] = Field(default_factory=dict, description="action name -> change when taken")
    thresholds: list[Threshold] = Field(default_factory=list)

    @model_validator(mode="after")
    def _range(self) -> Clock:
        _check_range(self.start, self.min, self.max)
        return self


def _check_range(start: float, low: float, high: float) -> None:
    if low >= high:
        raise ValueError(f"min ({low}) must be below max ({high})")
    if not low <= start <= high:
        raise ValueError(f"start ({start}) must lie in [min, max] = [{low}, {high}]")


# ---------------------------------------------------------------------------------------------- objectives


class TransitionRule(_Strict):
    text: str | None = Field(default=None, description="narration; default: a plain sentence")
    public: bool | None = Field(default=None, description="filed for everyone (default: delivered, lit, relit)")
    bump: float = Field(default=0.0, description="added to the event's importance")
    effects: list[Effect] = Field(default_factory=list)


class ObjectiveKind(_Strict):
    noun: str | None = Field(default=None, description="what one is called: 'beacon' (default: the kind's key)")
    mode: Literal["carried", "in_place"] = "carried"
    chance: float = Field(default=1.0, ge=0, le=1, description="a claim's chance of success")
    chance_stat: str | None = Field(default=None, description="the claimant's stat that raises the chance")
    per_point: float = Field(default=0.0, description="chance added per point of that stat")
    contest: Literal["highest_stat", "random", "nobody", "first"] = "random"
    contest_stat: str | None = Field(default=None, description="for highest_stat (ties are drawn at random)")
    deliver_to: list[str] = Field(default_factory=list, description="carried: where it may be delivered")
    on_fall: Literal["drop", "lost", "taken"] = Field(
        default="drop", description="when its holder falls: dropped there, lost, or taken by who felled them"
    )
    aim: str | None = Field(
        default=None, description="what an agent seeking one pursues, a noun phrase: 'the {objective} on {location}'"
    )
    transitions: dict[Transition, TransitionRule] = Field(default_factory=dict)
    words: dict[Status, str] = Field(
        default_factory=dict, description="how its states are said: {free: dark, lit: burning, doused: put out}"
    )

    @model_validator(mode="after")
    def _contest_stat(self) -> ObjectiveKind:
        if self.contest == "highest_stat" and not self.contest_stat:
            raise ValueError("contest: highest_stat needs contest_stat (the stat that decides)")
        if self.mode == "in_place" and self.deliver_to:
            raise ValueError("deliver_to is for carried objectives; an in_place one is never delivered")
        return self


class Objective(_Strict):
    name: str = Field(min_length=1)
    kind: str | None = Field(default=None, description="a key of objective_kinds (default: the only kind)")
    location: str
    description: str = ""


# ------------------------------------------------------------------------------------------- agents, endings


class AgentDecl(_Strict):
    name: str = Field(min_length=1)
    title: str = ""
    path: str
    secondary_path: str | None = None
    persona: str = ""
    traits: list[str] = Field(default_factory=list)
    start: str = Field(description="the location the agent starts each cycle at")
    relationships: dict[str, float] = Field(default_factory=dict, description="initial trust, -1 to 1")
    stats: dict[str, float] = Field(default_factory=dict, description="starting values other than the stat's")
    seeks: str | None = Field(default=None, description="the objective the agent pursues")
    aim: str | None = Field(
        default=None, description="what the agent seeks, a noun phrase (default: from its objective's kind)"
    )

    @field_validator("relationships")
    @classmethod
    def _trust_range(cls, value: dict[str, float]) -> dict[str, float]:
        if bad := {k: v for k, v in value.items() if not -1.0 <= v <= 1.0}:
            raise ValueError(f"trust must lie in [-1, 1], got {bad}")
        return value


class ObjectivesCond(_Strict):
    status: list[Status] = Field(min_length=1)
    which: list[str] | None = Field(default=None, description="these objectives (default: all of them)")
    at_least: int | None = Field(default=None, ge=1, description="this many of them (default: every one)")


class EndWhen(_Strict):
    """An ending's condition, checked after every round: every field given must hold."""

    objectives: ObjectivesCond | None = None
    clock: Range | None = None
    pool: dict[str, Range] = Field(default_factory=dict)
    all_fallen: bool = False
    round_limit: bool = False

    @model_validator(mode="after")
    def _something(self) -> EndWhen:
        if not (self.objectives or self.clock or self.pool or self.all_fallen or self.round_limit):
            raise ValueError("an empty condition; expected objectives, clock, pool, all_fallen or round_limit")
        return self


class ScoreSpec(_Strict):
    """A cycle's score: a sum of declared terms, each in the world's own units."""

    base: float = 0.0
    objectives: dict[Status, float] = Field(default_factory=dict, description="per objective in that state")
    pools: dict[str, float] = Field(default_factory=dict, description="× (pool − min) / (max − min)")
    tally: float = Field(default=0.0, description="× every agent's tally, summed")
    clock: float = Field(default=0.0, description="× (clock − min) / (max − min)")
    standing: float = Field(default=0.0, description="per agent still standing")


class Ending(_Strict):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1, description="what every agent remembers of the cycle")
    when: EndWhen | None = Field(default=None, description="none: reached only by a threshold or an effect")
    score: ScoreSpec | None = Field(default=None, description="default: the world's score")


class KitLabels(WorldLabels):
    model_config = ConfigDict(extra="forbid", frozen=True)

    holding: str = Field(default="holding", description="the status line of what an agent carries")


class KitSpec(_Strict):
    """A whole kit world, as its YAML declares it."""

    name: str = Field(min_length=1)
    title: str = Field(min_length=1)
    description: str = ""
    rounds_per_cycle: int = Field(default=10, ge=1)
    labels: KitLabels = KitLabels()
    tags: dict[str, str] = Field(default_factory=dict, description="tags this world adds to the default ones")
    locations: list[Location] = Field(min_length=1)
    edges: list[Edge] = Field(default_factory=list, description="none: every place is one round from every other")
    stats: dict[str, Stat] = Field(default_factory=dict)
    pools: dict[str, Pool] = Field(default_factory=dict)
    clock: Clock | None = None
    objective_kinds: dict[str, ObjectiveKind] = Field(default_factory=dict)
    objectives: list[Objective] = Field(default_factory=list)
    actions: list[ActionDecl] = Field(min_length=1)
    agents: list[AgentDecl] = Field(min_length=1)
    situations: list[str] = Field(default_factory=list, description="templates drawn per location each round")
    stakes: str = Field(default="", description="a line composed from the world's state, after each situation")
    score: ScoreSpec = ScoreSpec()
    endings: list[Ending] = Field(default_factory=list)
