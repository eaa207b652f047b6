"""The progress events a run reports, as one typed union: what the graphs write to LangGraph's custom stream (what
Studio and any `langgraph_sdk` client read), what `Simulation.stream()` and the Scepter yield, and what the CLI's
progress bars and `--live` dashboard follow.

Each event is a pydantic model whose `type` field tells it apart; producers build the model and send
`event.payload()` (a JSON dict, as a stream carries it), and a reader may parse a dict back with `parse_event`.
docs/studio.md's table of events is generated from these classes (`tools/event_table.py`; a test checks it):
a class's docstring says when it is sent, `SOURCES` who sends it, and each field's description what it holds.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter


class Event(BaseModel):
    """A progress event. `SOURCES` names what sends it (graphs, or a Python stream)."""

    model_config = ConfigDict(extra="forbid")
    SOURCES: ClassVar[str] = ""

    def payload(self) -> dict[str, Any]:
        """The event as a stream carries it: a JSON-able dict with its `type`."""
        return self.model_dump(mode="json")


_SOCIETY = "graphs: society, recurrence"
_RECURRENCE = "graph: recurrence"
_EXPERTS = "graph: experts"
_BENCHMARK = "graph: benchmark"
_FORK = "graph: fork"
_SIMULATION = "`Simulation.stream()`"
_SCEPTER = "`Scepter.stream()`"


class CycleStarted(Event):
    """A cycle begins (`genesis`)."""

    SOURCES = _SOCIETY
    type: Literal["cycle_started"] = "cycle_started"
    cycle: int
    agents: int = Field(description="agents in the world")


class RoundStarted(Event):
    """The world's director opens a round (`director`)."""

    SOURCES = _SOCIETY
    type: Literal["round_started"] = "round_started"
    cycle: int
    round: int
    agents: int = Field(description="agents acting this round")


class TurnDone(Event):
    """An agent has decided (`agent_turn`)."""

    SOURCES = _SOCIETY
    type: Literal["turn_done"] = "turn_done"
    agent: str
    action: str
    target: str | None
    flags: list[str] = Field(description="e.g. fallback, repaired, cached")


class Reflected(Event):
    """An agent reflected on its memories (`remember`)."""

    SOURCES = _SOCIETY
    type: Literal["reflected"] = "reflected"
    agent: str
    text: str
    evidence: list[str] = Field(description="the memories the insight cites")


class RoundDone(Event):
    """The round is resolved and its samples written (`record`)."""

    SOURCES = _SOCIETY
    type: Literal["round_done"] = "round_done"
    cycle: int
    round: int
    outcome: str | None = Field(description="the cycle's outcome once it has one")
    actions: dict[str, str] = Field(description="agent → action")
    targets: dict[str, str | None] = Field(description="agent → target")
    view: dict[str, Any] = Field(
        description="the world as it shows itself: agents' places and fields, gauges, objectives, trust, score"
    )
    models: dict[str, dict[str, int]] = Field(description="model calls so far by role, in brief")


class CycleDone(Event):
    """The ending is remembered and retention applied (`end_cycle`)."""

    SOURCES = _RECURRENCE
    type: Literal["cycle_done"] = "cycle_done"
    cycle: int
    outcome: str
    text: str = Field(description="how the cycle ended, in the world's words")
    rounds: int
    score: float | None
    tally: dict[str, float] = Field(description="the score per agent")
    facts: dict[str, Any] = Field(description="the world's own numbers")
    fallen: list[str]
    memories_kept: dict[str, int] = Field(description="private memories each agent carries into the next cycle")


class Repaired(Event):
    """A resumed run rebuilt a damaged shard from its checkpoint, or `--fresh-memory` set a damaged store aside."""

    SOURCES = f"{_SIMULATION}, {_SCEPTER}"
    type: Literal["repaired"] = "repaired"
    message: str
    society: str | None = Field(default=None, description="which society, in a Scepter run")


class TurnsSelected(Event):
    """The turns to judge are drawn (`select_turns`)."""

    SOURCES = _EXPERTS
    type: Literal["turns_selected"] = "turns_selected"
    run_dir: str
    turns: int
    of: int = Field(description="turns the run holds")


class CandidatesProposed(Event):
    """The alternatives are in (`propose_alternatives`)."""

    SOURCES = _EXPERTS
    type: Literal["candidates_proposed"] = "candidates_proposed"
    turns: int
    candidates: int


class CandidatesScored(Event):
    """Both panels have scored (`score_candidates`)."""

    SOURCES = _EXPERTS
    type: Literal["candidates_scored"] = "candidates_scored"
    turns: int
    candidates: int
    judge: str


class TurnReviewed(Event):
    """A human verdict is taken (`human_review`)."""

    SOURCES = _EXPERTS
    type: Literal["turn_reviewed"] = "turn_reviewed"
    turn: str = Field(description="the sample's id")
    index: int
    of: int
    choice: Literal["A", "B", "tie"]


class PairsWritten(Event):
    """`dpo.jsonl` and the judgements are written (`write_pairs`)."""

    SOURCES = _EXPERTS
    type: Literal["pairs_written"] = "pairs_written"
    pairs: int
    ties_dropped: int
    dropped_for_balance: int
    out_dir: str


class TaskStarted(Event):
    """A model starts a task (`benchmark_model`)."""

    SOURCES = _BENCHMARK
    type: Literal["task_started"] = "task_started"
    model: str
    task: str
    index: int
    of: int


class TaskDone(Event):
    """A task is scored (0-100, the leaderboard's figure)."""

    SOURCES = _BENCHMARK
    type: Literal["task_done"] = "task_done"
    model: str
    task: str
    score: float
    items: int


class ModelDone(Event):
    """A model's tasks are all done."""

    SOURCES = _BENCHMARK
    type: Literal["model_done"] = "model_done"
    model: str
    pes_score: float
    ci: list[float] | None = Field(description="the 95% interval; null where too few Paths allow one")


class LeaderboardWritten(Event):
    """The leaderboard files are written (`write_leaderboard`)."""

    SOURCES = _BENCHMARK
    type: Literal["leaderboard_written"] = "leaderboard_written"
    out_dir: str
    ranking: list[dict[str, Any]] = Field(description="model and pes_score, best first")


class Forked(Event):
    """The run is replayed up to the fork point into the branch's directory (`replay`); the branch's own events
    (the recurrence graph's, then `done`) follow as it goes on (`branch`)."""

    SOURCES = _FORK
    type: Literal["forked"] = "forked"
    parent: str = Field(description="the run branched off")
    at: str = Field(description="CYCLE/ROUND: the last round the branch shares with it")
    out_dir: str = Field(description="the branch's run directory")


class SocietyUpdate(Event):
    """A society of a Scepter run finished a round (or started, or was found done)."""

    SOURCES = _SCEPTER
    type: Literal["society"] = "society"
    society: str
    position: int = Field(default=0, description="rounds played of `total`")
    total: int = 1
    samples: int = 0
    done: bool = False
    pid: int = Field(default=0, description="the process running it")
    node: str = Field(default="", description="the Ray node running it (its id; empty on the local engine)")


class SocietyDone(Event):
    """A society of a Scepter run has finished."""

    SOURCES = _SCEPTER
    type: Literal["society_done"] = "society_done"
    society: str
    summary: dict[str, Any] = Field(description="its summary.json")


class Done(Event):
    """The run has finished; its last event."""

    SOURCES = f"{_SIMULATION}, {_SCEPTER}, {_FORK}"
    type: Literal["done"] = "done"
    summary: dict[str, Any] = Field(description="what summary.json holds")


ProgressEvent = Annotated[
    CycleStarted
    | RoundStarted
    | TurnDone
    | Reflected
    | RoundDone
    | CycleDone
    | Repaired
    | TurnsSelected
    | CandidatesProposed
    | CandidatesScored
    | TurnReviewed
    | PairsWritten
    | TaskStarted
    | TaskDone
    | ModelDone
    | LeaderboardWritten
    | Forked
    | SocietyUpdate
    | SocietyDone
    | Done,
    Field(discriminator="type"),
]
EVENTS: tuple[type[Event], ...] = get_args(get_args(ProgressEvent)[0])  # in the order above
_ADAPTER: TypeAdapter[ProgressEvent] = TypeAdapter(ProgressEvent)


def parse_event(payload: dict[str, Any]) -> ProgressEvent:
    """A streamed event back as its model (a pydantic ValidationError if it is none of them)."""
    return _ADAPTER.validate_python(payload)


def markdown_table() -> str:
    """docs/studio.md's table of events: source, `type`, fields, when it is sent."""
    rows = ["| Sent by | `type` | Fields | Sent when |", "|---|---|---|---|"]
    previous = None
    for event in EVENTS:
        fields = []
        for name, info in event.model_fields.items():
            if name != "type":
                fields.append(f"{name}: {info.description}" if info.description else name)
        source = "" if previous == event.SOURCES else event.SOURCES
        previous = event.SOURCES
        kind = event.model_fields["type"].default
        rows.append(f"| {source} | `{kind}` | {'; '.join(fields)} | {(event.__doc__ or '').strip()} |")
    return "\n".join(rows) + "\n"
