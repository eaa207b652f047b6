"""The rules kit's YAML schema: a world's map, stats, pools, clocks, relations, objectives, actions, agents,
endings, and its society's rules (every round, triggers, the director, feeds, votes, trade).

Every model forbids unknown keys, so a misspelt field is one error line naming it. Cross-references (an edge to
an unknown location, an effect naming an unknown pool, a threshold outside its gauge's range…) are checked in
`checks.py` once the shapes are valid. The effects are in effects.py. See docs/worlds-kit.md for the reference
a world's author reads.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, ConfigDict, Field, field_validator, model_validator

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.contracts.world import WorldLabels
from amphoreus_graph.worlds.kit.effects import Effect
from amphoreus_graph.worlds.kit.terms import Amount, Formula, Status, Strict, Transition

# ------------------------------------------------------------------------------------------------ conditions


class Range(Strict):
    """Inclusive bounds; either may be left out."""

    min: float | None = None
    max: float | None = None

    def holds(self, value: float) -> bool:
        return (self.min is None or value >= self.min) and (self.max is None or value <= self.max)


def _test_shorthand(value: Any) -> Any:
    """`when: "actor.coin >= price.grain"` is `when: {test: ...}`."""
    return {"test": value} if isinstance(value, str) else value


class Condition(Strict):
    """When an action is offered (or a pressure applies): every field given must hold for the actor. `all`,
    `any` and `not` nest conditions; `test` is an expression (worlds/kit/expr.py), e.g. `actor.coin >= 5`."""

    model_config = ConfigDict(populate_by_name=True)

    test: Formula | None = Field(default=None, description="an expression that must be true (not 0)")
    all_: list[When] | None = Field(default=None, alias="all", description="every one of these holds")
    any_: list[When] | None = Field(default=None, alias="any", description="at least one of these holds")
    not_: When | None = Field(default=None, alias="not", description="this does not hold")

    holding: bool | None = Field(default=None, description="true: holds some objective; false: holds none")
    at: list[str] | None = Field(default=None, description="the actor stands at one of these locations")
    stat: dict[str, Range] = Field(default_factory=dict, description="the actor's stats")
    clock: Range | None = None
    pool: dict[str, Range] = Field(default_factory=dict)
    objective_here: list[Status] | None = Field(
        default=None, description="an objective in one of these states lies where the actor stands"
    )
    round: Range | None = None


When = Annotated[Condition, BeforeValidator(_test_shorthand)]
Condition.model_rebuild()


class TargetFilter(Strict):
    """Which targets an action offers, beyond its kind and reach."""

    test: Formula | None = Field(default=None, description="agent targets: true for this target (`target.coin > 0`)")

    self_: bool = Field(default=False, alias="self", description="an agent action may target its own actor")
    holding: bool | None = Field(default=None, description="agent targets that hold (true) / hold no objective")
    status: list[Status] | None = Field(default=None, description="objective targets in these states")
    kinds: list[str] | None = Field(default=None, description="objective targets of these kinds")


class PressureRule(Strict):
    when: When
    add: float = Field(ge=-1, le=1)


class ActionDecl(Strict):
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
    secret: bool = Field(default=False, description="only the actor witnesses its event (a ballot in a booth)")
    when: When | None = None
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


class Location(Strict):
    name: str = Field(min_length=1)
    description: str = ""
    actions: list[str] | None = Field(
        default=None, description="only these actions are offered here (a polling booth: vote or leave)"
    )
    private: bool = Field(
        default=False,
        description="those here do not see each other (a network, a city): no one is listed as present, and what "
        "one does here is witnessed only by those it involves",
    )
    situations: list[str] = Field(default_factory=list, description="this place's own situation templates")


class Edge(Strict):
    between: list[str] = Field(min_length=2, max_length=2)
    time: int = Field(default=1, ge=1, description="rounds the journey takes")
    one_way: bool = Field(default=False, description="only from the first location to the second")
    open: bool = Field(default=True, description="false: closed until a threshold opens it")


class Stat(Strict):
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


class Threshold(Strict):
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


class Regrowth(Strict):
    kind: Literal["logistic", "linear"] = "logistic"
    rate: float = Field(description="logistic: growth rate r in x += r·x·(1 − x/K); linear: amount per round")
    capacity: float | None = Field(default=None, description="logistic K; default: the pool's max")


class Pool(Strict):
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


class Clock(Strict):
    """The world's clock or calamity: a number in its own range that rises (or falls) round by round."""

    label: str = "clock"
    start: float = 0.0
    min: float = 0.0
    max: float
    rise_per_round: Amount = Field(
        default=0.0, description="a number, or an expression (a tide: `1 if round % 6 < 3 else -1`)"
    )
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


class TransitionRule(Strict):
    text: str | None = Field(default=None, description="narration; default: a plain sentence")
    public: bool | None = Field(default=None, description="filed for everyone (default: delivered, lit, relit)")
    bump: float = Field(default=0.0, description="added to the event's importance")
    effects: list[Effect] = Field(default_factory=list)


class ObjectiveKind(Strict):
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


class Objective(Strict):
    name: str = Field(min_length=1)
    kind: str | None = Field(default=None, description="a key of objective_kinds (default: the only kind)")
    location: str
    description: str = ""


# ------------------------------------------------------------------------------------------- agents, endings


class RelationDecl(Strict):
    """A number every ordered pair of agents has (what one owes another, whether one follows another), 0 unless
    set; kept sparse, so a society of thousands pays only for the pairs that are not 0."""

    label: str | None = None
    min: float = 0.0
    max: float
    shown: bool = Field(default=True, description="an agent perceives its own relations of this kind")

    @model_validator(mode="after")
    def _range(self) -> RelationDecl:
        _check_range(0.0, self.min, self.max)
        return self


class AgentDecl(Strict):
    name: str = Field(min_length=1)
    title: str = ""
    path: str
    secondary_path: str | None = None
    persona: str = ""
    traits: list[str] = Field(default_factory=list)
    start: str = Field(description="the location the agent starts each cycle at")
    relationships: dict[str, float] = Field(default_factory=dict, description="initial trust, -1 to 1")
    stats: dict[str, float] = Field(default_factory=dict, description="starting values other than the stat's")
    relations: dict[str, dict[str, float]] = Field(
        default_factory=dict, description="relation -> other agent -> starting value (debt: {Bo: 10})"
    )
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


class ObjectivesCond(Strict):
    status: list[Status] = Field(min_length=1)
    which: list[str] | None = Field(default=None, description="these objectives (default: all of them)")
    at_least: int | None = Field(default=None, ge=1, description="this many of them (default: every one)")


class EndWhen(Strict):
    """An ending's condition, checked after every round: every field given must hold."""

    objectives: ObjectivesCond | None = None
    clock: Range | None = None
    pool: dict[str, Range] = Field(default_factory=dict)
    all_fallen: bool = False
    round_limit: bool = False
    test: Formula | None = Field(default=None, description="an expression that must be true (no actor here)")

    @model_validator(mode="after")
    def _something(self) -> EndWhen:
        if not (self.objectives or self.clock or self.pool or self.all_fallen or self.round_limit or self.test):
            raise ValueError("an empty condition; expected objectives, clock, pool, all_fallen, round_limit or test")
        return self


class ScoreSpec(Strict):
    """A cycle's score: a sum of declared terms, each in the world's own units."""

    base: float = 0.0
    objectives: dict[Status, float] = Field(default_factory=dict, description="per objective in that state")
    pools: dict[str, float] = Field(default_factory=dict, description="× (pool − min) / (max − min)")
    tally: float = Field(default=0.0, description="× every agent's tally, summed")
    clock: float = Field(default=0.0, description="× (clock − min) / (max − min)")
    standing: float = Field(default=0.0, description="per agent still standing")
    expr: Formula | None = Field(default=None, description="an expression added as it stands (no actor)")
    per_agent: Formula | None = Field(
        default=None, description="an expression for each agent (its `actor`), fallen or not, summed"
    )


class Ending(Strict):
    id: str = Field(min_length=1)
    text: str = Field(min_length=1, description="what every agent remembers of the cycle")
    when: EndWhen | None = Field(default=None, description="none: reached only by a threshold or an effect")
    score: ScoreSpec | None = Field(default=None, description="default: the world's score")


class RoundRule(Strict):
    """What happens at the end of every round, after journeys and before pools regrow: once (`each: world`),
    for every standing agent (`each: agent`, its `actor`), or for every ordered pair whose `relation` is not 0
    (`each: pair`, `actor` holding it towards `target`): interest on debts, income, decay."""

    each: Literal["world", "agent", "pair"] = "world"
    relation: str | None = Field(default=None, description="each: pair — the relation whose pairs are visited")
    when: When | None = None
    effects: list[Effect] = Field(min_length=1)
    text: str | None = Field(default=None, description="filed for the actor (each: agent/pair) or for everyone")

    @model_validator(mode="after")
    def _pairs(self) -> RoundRule:
        if (self.each == "pair") != (self.relation is not None):
            raise ValueError("each: pair needs relation: (the pairs it visits), and only each: pair takes one")
        return self


class Trigger(Strict):
    """A rule watched after every round: when its condition comes to hold, its text is filed for everyone, its
    effects apply and its ending (if any) ends the cycle. It fires once a cycle unless `repeat`."""

    id: str | None = Field(default=None, description="default: trigger0, trigger1… in order")
    when: When
    repeat: bool = Field(default=False, description="fire every round at whose end the condition holds")
    text: str = ""
    effects: list[Effect] = Field(default_factory=list)
    end: str | None = Field(default=None, description="an ending's id")


class DirectorEvent(Strict):
    text: str = Field(min_length=1, description="what happens; {location} is the place, for per: place")
    weight: float = Field(default=1.0, gt=0)
    when: When | None = Field(default=None, description="per: place — `here.agents`, `here.lit`… name the place")
    at: list[str] | None = Field(default=None, description="per: place — only these places")
    effects: list[Effect] = Field(default_factory=list)


class Draw(Strict):
    """The director's events: as each round opens, one is drawn (by weight, among those whose condition holds)
    for the whole world (`per: round`) or for each place (`per: place`), with probability `chance`. Its text
    joins the situation of those it concerns; its effects apply before anyone acts."""

    per: Literal["round", "place"] = "round"
    chance: float = Field(default=1.0, ge=0, le=1)
    events: list[DirectorEvent] = Field(min_length=1)


class SeedPost(Strict):
    author: str
    text: str = Field(min_length=1)
    topic: str | None = None


class FeedSpec(Strict):
    """A social feed: what agents post, and what each one perceives of it each round (docs/worlds-kit.md,
    "Feeds")."""

    follows: str | None = Field(
        default=None, description="a relation: an agent sees the posts of those it holds above 0 (none: everyone's)"
    )
    size: int = Field(default=5, ge=1, le=50, description="posts an agent perceives each round")
    window: int = Field(default=3, ge=1, description="rounds a post stays in feeds after the one it was made in")
    rank: Literal["recent", "popular"] = Field(
        default="recent", description="newest first, or most liked and reposted first (then newest)"
    )
    own: bool = Field(default=False, description="an agent's feed shows its own posts too")
    topics: list[str] = Field(
        default_factory=list, description="what posts may be about; each topic's spread is counted"
    )
    seeds: list[SeedPost] = Field(default_factory=list, description="posts there as each cycle begins")


class Outcome(Strict):
    text: str = ""
    effects: list[Effect] = Field(default_factory=list)


class VotesSpec(Strict):
    """Motions agents propose in their own words and vote on (docs/worlds-kit.md, "Votes")."""

    open_for: int = Field(default=2, ge=1, description="rounds a motion stays open after the one it was proposed in")
    deadline: int | None = Field(default=None, ge=1, description="a round by which every motion closes")
    quorum: int = Field(default=1, ge=1, description="ballots a motion needs to be decided at all")
    majority: float = Field(default=0.5, ge=0, lt=1, description="it passes when ayes exceed this share of ballots")
    passed: Outcome = Outcome()
    failed: Outcome = Outcome()


class TradeSpec(Strict):
    """Offers between two agents (docs/worlds-kit.md, "Trade")."""

    open_for: int = Field(default=1, ge=0, description="rounds an offer stays open after the one it was made in")


class KitLabels(WorldLabels):
    model_config = ConfigDict(extra="forbid", frozen=True)

    holding: str = Field(default="holding", description="the status line of what an agent carries")


class KitSpec(Strict):
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
    clocks: dict[str, Clock] = Field(default_factory=dict, description="more clocks, by name (clock.NAME)")
    relations: dict[str, RelationDecl] = Field(default_factory=dict, description="numbers between two agents")
    objective_kinds: dict[str, ObjectiveKind] = Field(default_factory=dict)
    objectives: list[Objective] = Field(default_factory=list)
    actions: list[ActionDecl] = Field(min_length=1)
    agents: list[AgentDecl] = Field(min_length=1)
    situations: list[str] = Field(default_factory=list, description="templates drawn per location each round")
    stakes: str = Field(default="", description="a line composed from the world's state, after each situation")
    score: ScoreSpec = ScoreSpec()
    endings: list[Ending] = Field(default_factory=list)
    every_round: list[RoundRule] = Field(default_factory=list)
    triggers: list[Trigger] = Field(default_factory=list)
    director: list[Draw] = Field(default_factory=list)
    sight: int | None = Field(
        default=None,
        ge=1,
        description="the most others an agent notices where it stands each round: names, targets, witnesses of its "
        "deeds (sight.py); none: everyone there",
    )
    feed: FeedSpec | None = None
    votes: VotesSpec | None = None
    trade: TradeSpec | None = None
