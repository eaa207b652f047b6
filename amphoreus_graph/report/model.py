"""A run read back for the report: cycles, rounds, turns, trust, Path alignment, memory and benchmark results.

Everything comes from what the run wrote (config, summary, samples, chronicle, Chroma memory, a leaderboard
beside it) and from its world's own words (labels, the `WorldView` of each round); nothing is re-simulated and
nothing names a world's concepts. Path alignment is the offline judges' `path_fidelity` (1-10) for the
decisions the agents actually took, the same judge the data engine uses.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from amphoreus_graph.catalogs.scenario import Scenario, scenario_of
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.contracts.world import CycleEnd, Gauge, WorldLabels, WorldView
from amphoreus_graph.errors import AmphoreusError, format_validation_error
from amphoreus_graph.layout import RunDir
from amphoreus_graph.scepter.plan import is_scepter_run, load_plan
from amphoreus_graph.society.chronicle import RoundRecord, iter_chronicle
from amphoreus_graph.society.config import stored_config
from amphoreus_graph.society.recurrence import cycle_summary
from amphoreus_graph.society.samples import Sample, iter_samples
from amphoreus_graph.society.summary import CycleSummary, RunSummary

M = TypeVar("M", bound=BaseModel)
LEADERBOARD_PLACES = ("leaderboard.json", "bench/leaderboard.json")


class Turn(BaseModel):
    """One agent's turn as the transcript shows it."""

    cycle: int
    round: int
    agent: str
    path: str
    action: str
    target: str | None
    speech: str
    rationale: str
    flags: list[str]
    memories: list[RecalledMemory]


class RoundView(BaseModel):
    """What a round did: the game master's events, the world's gauges after it, whose score rose."""

    round: int
    gauges: list[Gauge]
    events: list[str]
    gained: dict[str, float] = Field(description="agent → how much its score (the world's tally) rose this round")

    def gauge(self, name: str) -> Gauge | None:
        return next((g for g in self.gauges if g.name == name), None)


class CycleView(CycleSummary):
    """A cycle with everything the report draws of it."""

    trust: dict[str, dict[str, float]] = Field(description="truster → trusted → trust in [-1, 1] at the end")
    turns: list[Turn]
    round_log: list[RoundView] = Field(description="each round as the chronicle recorded it")
    written: dict[str, int] = Field(description="agent → memories filed for it during the cycle (chronicle)")

    @property
    def samples(self) -> int:
        return len(self.turns)

    @property
    def fallbacks(self) -> int:
        return sum("fallback" in t.flags for t in self.turns)

    @property
    def repaired(self) -> int:
        return sum("repaired" in t.flags for t in self.turns)

    @property
    def gauge_names(self) -> list[str]:
        """The world's gauges over the cycle's rounds, in the order the world shows them."""
        return list(dict.fromkeys(g.name for r in self.round_log for g in r.gauges))

    def action_at(self, round_: int, agent: str) -> Turn | None:
        return next((t for t in self.turns if t.round == round_ and t.agent == agent), None)


class CarriedMemory(BaseModel):
    agent: str
    text: str
    cycle: int
    round: int
    kind: str
    carried_to: int


class MemoryView(BaseModel):
    """The store at the end of the run: records per agent and kind, and those retention carried across resets."""

    held: dict[str, dict[str, int]]
    carried: list[CarriedMemory]


class RunReport(BaseModel):
    run: str
    scenario: str
    title: str
    labels: WorldLabels = Field(description="how the run's world names its agents, objectives and score")
    model: str
    seed: int
    wall_time_s: float
    agents: dict[str, str] = Field(description="agent → Path, in the scenario's order")
    paths: list[str] = Field(description="the catalog's Paths in order, then any other a turn names (for colours)")
    actions: list[str] = Field(description="the actions taken in the run, in the order the world declares them")
    cycles: list[CycleView]
    alignment: dict[str, dict[int, float]] = Field(description="agent → cycle → mean judged path_fidelity")
    memory: MemoryView | None
    memory_note: str = ""
    leaderboard: Leaderboard | None
    models: dict[str, dict[str, Any]] = Field(default_factory=dict, description="model calls by role (summary.json)")
    stopped: str | None = None

    @property
    def fact_names(self) -> list[str]:
        """The world's own numbers over the cycles (a fact the summary already has a column for is not repeated)."""
        facts = dict.fromkeys(name for c in self.cycles for name in c.facts)
        return [name for name in facts if name not in CycleSummary.model_fields]


class TaskScore(BaseModel):
    score: float
    ci: tuple[float, float] | None  # null where n allows no interval


class BoardRow(BaseModel):
    model: str
    pes_score: float
    ci: tuple[float, float] | None
    tasks: dict[str, TaskScore]
    fallback_rate: float = 0.0


class Leaderboard(BaseModel):
    """The parts of `amphoreus bench`'s leaderboard.json the report shows."""

    models: list[BoardRow]
    tasks: list[str]
    settings: dict[str, Any] = Field(default_factory=dict)


def _read_json(path: Path, expected: str) -> dict[str, Any]:
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such file; expected {expected}")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise AmphoreusError(f"{path}: not JSON ({exc.msg} at line {exc.lineno}); expected {expected}") from None
    if not isinstance(data, dict):
        raise AmphoreusError(f"{path}: a JSON {type(data).__name__}; expected {expected}")
    return data


RUN_EXPECTED = "a finished run directory written by `amphoreus simulate`"
BOARD_EXPECTED = "a leaderboard.json written by `amphoreus bench`"


def _validated(model: type[M], path: Path, expected: str = RUN_EXPECTED) -> M:
    """A JSON file read into its model; any problem is one line naming the file (and field)."""
    try:
        return model.model_validate(_read_json(path, expected))
    except ValidationError as exc:
        raise AmphoreusError(format_validation_error(str(path), exc)) from None


def load_leaderboard(run: Path, bench: Path | None) -> Leaderboard | None:
    """`--bench DIR` (or its leaderboard.json), else a leaderboard written inside the run, else none."""
    if bench is not None:
        path = bench / "leaderboard.json" if bench.is_dir() else bench
    else:
        found = [run / p for p in LEADERBOARD_PLACES if (run / p).is_file()]
        if not found:
            return None
        path = found[0]
    return _validated(Leaderboard, path, BOARD_EXPECTED)


def _turn(sample: Sample) -> Turn:
    memories = sample.context.memories if sample.context else []
    return Turn(
        cycle=sample.cycle,
        round=sample.round,
        agent=sample.agent,
        path=sample.path,
        action=sample.decision.action,
        target=sample.decision.target,
        speech=sample.decision.speech,
        rationale=sample.decision.rationale,
        flags=sample.flags,
        memories=memories,
    )


def round_views(records: list[RoundRecord], start: WorldView) -> list[RoundView]:
    """Rounds of one cycle, with how much each agent's score rose since the round before (the first round
    against the world as the cycle started)."""
    views: list[RoundView] = []
    before = start.score
    for record in records:
        now = record.world.score
        gained = {a: now[a] - before.get(a, 0.0) for a in now if now[a] > before.get(a, 0.0)}
        views.append(
            RoundView(
                round=record.round, gauges=record.world.gauges, events=[e.text for e in record.events], gained=gained
            )
        )
        before = now
    return views


def memories_written(records: list[RoundRecord], agents: list[str]) -> dict[str, int]:
    """Memories filed per agent in a cycle: each event once per witness, public events for everyone."""
    counts: Counter[str] = Counter()
    for record in records:
        for event in record.events:
            counts.update(agents if event.public else event.witnesses)
    return {a: counts[a] for a in agents}


def summary_so_far(run: Path, chronicle: dict[int, list[RoundRecord]], samples: list[Sample]) -> RunSummary:
    """For a run still going, or one made in Studio (no summary.json): each cycle as its last round left it
    (the world's closing words and score are only known once the run has summed the cycle up)."""
    cycles = []
    for _, records in sorted(chronicle.items()):
        view = records[-1].world
        so_far = CycleEnd(outcome=view.outcome or "in progress", text="", tally=view.score)
        cycles.append(CycleSummary.model_validate(cycle_summary(so_far, view)))
    last = samples[-1]
    return RunSummary(run=run.name, model=last.model, seed=last.context.seed if last.context else 0, cycles=cycles)


def _scenario_name(run: Path, chronicle: dict[int, list[RoundRecord]]) -> tuple[str, bool]:
    """The run's scenario and whether config.json named it (Studio runs have only their chronicle)."""
    if RunDir(run).config.is_file():
        return stored_config(run).scenario, True
    named = next((r.scenario for records in chronicle.values() for r in records if r.scenario), None)
    if named is None:
        raise AmphoreusError(f"{RunDir(run).config}: no such file; expected {RUN_EXPECTED}")
    return named, False


def load_run(run: Path, *, bench: Path | None = None, judge_alignment: bool = True) -> RunReport:
    """Read a run directory into a RunReport (errors name the file and what was expected). A run without
    summary.json (still going, or made in Studio) is shown as far as its chronicle goes."""
    if is_scepter_run(run):
        plan = load_plan(run)
        first = plan.society(0).out.relative_to(plan.out.absolute())
        raise AmphoreusError(
            f"{run}: a Scepter run of {plan.societies} societies; expected one society's directory, e.g. {run / first}"
        )
    chronicle: dict[int, list[RoundRecord]] = defaultdict(list)
    for record in iter_chronicle(run):
        chronicle[record.cycle].append(record)
    name, configured = _scenario_name(run, chronicle)
    scenario = scenario_of(name)
    agents = {a.name: a.path for a in scenario.agents}
    files = RunDir(run)
    finished = files.summary.is_file() or not chronicle
    written = _validated(RunSummary, files.summary) if finished else None
    samples = list(iter_samples(files.samples))
    if not samples:
        raise AmphoreusError(f"{files.samples}: no samples; expected a run that lived at least one round")
    if not chronicle:
        raise AmphoreusError(f"{files.chronicle}: no rounds recorded; expected the chronicle the run wrote")
    summary = written or summary_so_far(run, chronicle, samples)
    cycles = []
    for cycle in summary.cycles:
        in_cycle = [s for s in samples if s.cycle == cycle.cycle]
        records = chronicle.get(cycle.cycle, [])
        cycles.append(
            CycleView(
                **cycle.model_dump(),
                trust=records[-1].world.trust if records else {},
                turns=[_turn(s) for s in in_cycle],
                round_log=round_views(records, scenario.world.view(scenario.world.genesis(cycle.cycle))),
                written=memories_written(records, list(agents)),
            )
        )
    memory, note = _memory_view(run, list(agents)) if configured else (None, "no config.json says where it lives")
    return RunReport(
        run=summary.run,
        scenario=scenario.name,
        title=scenario.title,
        labels=scenario.world.labels,
        model=summary.model,
        seed=summary.seed,
        wall_time_s=summary.wall_time_s,
        agents=agents,
        paths=list(dict.fromkeys([*scenario.catalog.names(), *(s.path for s in samples)])),
        actions=actions_taken(scenario, samples),
        cycles=cycles,
        alignment=path_alignment(samples) if judge_alignment else {},
        memory=memory,
        memory_note=note,
        leaderboard=load_leaderboard(run, bench),
        models=summary.models,
        stopped=summary.stopped,
    )


def actions_taken(scenario: Scenario, samples: list[Sample]) -> list[str]:
    """The actions the run's agents took, in the order their world declares them (any it no longer declares
    after them, by name): the report gives each a colour."""
    taken = {s.decision.action for s in samples}
    declared = [a for a in scenario.world.actions if a in taken]
    return declared + sorted(taken - set(declared))


def path_alignment(samples: list[Sample]) -> dict[str, dict[int, float]]:
    """Mean judged `path_fidelity` per agent per cycle, scored by the offline panels in one batch."""
    from amphoreus_graph.data.judges.base import JudgeItem
    from amphoreus_graph.data.judges.offline import OfflineJudge

    judged = [(s, s.context) for s in samples if s.context is not None]
    verdicts = OfflineJudge().score([JudgeItem(turn=context, decision=s.decision) for s, context in judged])
    scores: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (sample, _), verdict in zip(judged, verdicts, strict=True):
        scores[sample.agent][sample.cycle].append(verdict["nameless"].scores["path_fidelity"])
    return {
        agent: {c: round(statistics.fmean(v), 2) for c, v in by_cycle.items()} for agent, by_cycle in scores.items()
    }


def _memory_view(run: Path, agents: list[str]) -> tuple[MemoryView | None, str]:
    """What the store holds now; a store in use by a live run (or an unreachable server) is skipped, said so."""
    from amphoreus_graph.memory.records import PUBLIC
    from amphoreus_graph.society.inspect import run_memory

    try:
        with run_memory(run) as (_, memory):
            held: dict[str, dict[str, int]] = {}
            carried: list[CarriedMemory] = []
            by_owner = [*((agent, memory.records(agent)) for agent in agents), (PUBLIC, memory.public_records())]
            for owner, records in by_owner:
                held[owner] = dict(Counter(r.kind.value for r in records))
                carried += [
                    CarriedMemory(
                        agent=owner,
                        text=r.text,
                        cycle=r.cycle,
                        round=r.round,
                        kind=r.kind.value,
                        carried_to=r.carried_to,
                    )
                    for r in records
                    if r.carried_to > r.cycle
                ]
    except AmphoreusError as exc:
        return None, str(exc)
    return MemoryView(held=held, carried=carried), ""
