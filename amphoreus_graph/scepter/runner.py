"""Scepter: many independent societies at once, on the local engine or on Ray, merged into one run.

    scepter = Scepter(ScepterConfig(societies=8, scenarios=["trio"], template=RunConfig(out=Path("runs/many"))))
    async for event in scepter.stream():      # typed: SocietyUpdate (progress), SocietyDone, Done
        ...
    scepter.summary                           # a ScepterSummary

RUN/scepter.json says what to run (so `--resume RUN` needs only the directory), RUN/societies/NAME/ holds each
society as an ordinary run, RUN/samples/ the checked merge of their samples and RUN/summary.json the totals.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncGenerator
from contextlib import aclosing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from amphoreus_graph.atomic import write_json
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.events import Done, ProgressEvent, parse_event
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.seeds import load_seeds, seeds_folder
from amphoreus_graph.models.gateway import model_caller
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.scepter.local import LocalEngine
from amphoreus_graph.scepter.merge import MergedSociety, merge_society, write_manifest
from amphoreus_graph.scepter.plan import ScepterConfig, load_plan
from amphoreus_graph.scepter.progress import ScepterTracker, read_progress
from amphoreus_graph.scepter.ray_connect import probe
from amphoreus_graph.scepter.ray_engine import RayEngine, import_ray
from amphoreus_graph.scepter.society import Instrument, planned_rounds
from amphoreus_graph.society.summary import SUMMARY_FORMAT, RunSummary

TOTALS = (
    "samples_written",
    "turns",
    "model_calls",
    "tokens_in",
    "tokens_out",
    "failures",
    "fallbacks",
    "repaired",
    "secret_repaired",
    "secret_redacted",
)


class SocietyLine(BaseModel):
    """One society in a Scepter run's summary."""

    society: str
    scenario: str
    world: str
    seed: int
    samples_written: int
    outcomes: list[str]
    fallbacks: int
    node: str = Field(default="", description="the Ray node that finished it (its id; empty on the local engine)")


class ScepterSummary(BaseModel):
    """RUN/summary.json of a Scepter run: totals over its societies (each society's own is RunSummary)."""

    format_version: int = Field(default=SUMMARY_FORMAT, le=SUMMARY_FORMAT)
    run: str
    engine: str
    societies: int
    scenarios: list[str]
    base_seed: int
    model: str
    samples_written: int
    turns: int
    model_calls: int
    tokens_in: int
    tokens_out: int
    failures: int
    fallbacks: int
    repaired: int
    secret_repaired: int = Field(default=0, description="turns the discretion guard had asked again (all societies)")
    secret_redacted: int = Field(default=0, description="turns whose secret the discretion guard cut (all societies)")
    wall_time_s: float
    session_samples: int = Field(description="samples this session wrote (a resumed run counts its own)")
    samples_per_s: float
    per_society: list[SocietyLine]

    def payload(self) -> dict[str, Any]:
        """The summary as summary.json holds it."""
        return self.model_dump(mode="json")


class Scepter:
    """A Scepter run on disk. `stream()` yields its typed progress events and ends with `Done`; `summary` is then
    the run's `ScepterSummary`."""

    def __init__(self, plan: ScepterConfig, *, instrument: Instrument | None = None) -> None:
        self.plan = plan
        self.instrument = instrument
        self._summary: ScepterSummary | None = None
        self.tracker = ScepterTracker(plan.societies, self.total_positions())

    @classmethod
    def resume(cls, run: Path, **overrides: Any) -> Scepter:
        """Reopen a Scepter run; `engine`, `address`, `ray_cpus` or `parallel` may be changed (None: keep)."""
        plan = load_plan(run)
        return cls(plan.model_copy(update={k: v for k, v in overrides.items() if v is not None}))

    @property
    def summary(self) -> ScepterSummary:
        """The run's summary, once `stream()` or `run()` has taken it to its end."""
        if self._summary is None:
            raise AmphoreusError("the run has no summary yet; expected `stream()` or `run()` to its end first")
        return self._summary

    def total_positions(self) -> int:
        return sum(planned_rounds(cfg)[1] for cfg in self.plan.society_configs())

    def check(self) -> bool:
        """Fail on a broken scenario, seed file, model spec, missing Ray or a cluster address where nothing answers
        before anything is written; say whether
        the run's agents ask a model."""
        t = self.plan.template
        for name in dict.fromkeys(self.plan.scenarios):
            scenario = scenario_of(name)
            load_seeds(seeds_folder(scenario, t.seeds_dir), scenario.agent_names)
        asks = model_caller(resolve_model(t.model, base_url=t.base_url, max_concurrency=t.max_concurrency)) is not None
        if self.plan.engine == "ray":
            import_ray()
            if self.plan.address:
                probe(self.plan.address, self.plan.connect_timeout_s)
        if self.instrument is not None and self.plan.engine != "local":
            raise AmphoreusError("an instrument needs the local engine; expected engine='local'")
        return asks

    async def stream(self, *, resume: bool = False) -> AsyncGenerator[ProgressEvent, None]:
        """Run (or resume) every society to its end, yielding their progress typed (an engine passes them on as
        JSON dicts, across processes on Ray)."""
        plan, out = self.plan, self.plan.out
        asks_a_model = self.check()
        files = RunDir(out)
        if not resume and any(f.exists() for f in (files.plan, files.config, files.societies)):
            raise AmphoreusError(f"{out}: already holds a run; expected a new --out, or --resume {out}")
        if resume and not files.plan.is_file():
            raise AmphoreusError(f"{files.plan}: no such file; expected a Scepter run directory")
        plan.save()
        local = plan.engine == "local"
        engine: Any = LocalEngine(plan, instrument=self.instrument) if local else RayEngine(plan, asks_a_model)
        configs = {c.run_id: c for c in plan.society_configs()}
        tracker = self.tracker = ScepterTracker(plan.societies, self.total_positions())
        for cfg in configs.values():  # where an earlier session left each society: its rate counts only this one's
            tracker.update(read_progress(cfg.out) or {"society": cfg.run_id, "total": planned_rounds(cfg)[1]})
        started = time.perf_counter()
        summaries: dict[str, dict[str, Any]] = {}
        merged: list[MergedSociety] = []
        async with aclosing(engine.stream()) as events:  # closing this stream stops every society at once
            async for event in events:
                if event["type"] == "society":
                    tracker.update(event)
                if event["type"] == "society_done" and event["society"] not in summaries:
                    name, summary = event["society"], event["summary"]
                    tracker.finish(name, int(summary["samples_written"]))
                    summaries[name] = summary
                    expected = int(summary["samples_written"])
                    merged.append(await asyncio.to_thread(merge_society, out, name, configs[name].out, expected))
                yield parse_event(event)
        missing = [name for name in configs if name not in summaries]
        if missing:
            raise AmphoreusError(f"societies {', '.join(missing[:3])}… did not finish; resume with --resume {out}")
        write_manifest(out, merged, {"run": plan.run_id, "engine": plan.engine})
        wall = time.perf_counter() - started
        nodes = {name: str((read_progress(cfg.out) or {}).get("node", "")) for name, cfg in configs.items()}
        whole = self._summary = build_summary(
            plan, [summaries[n] for n in configs], wall, tracker.session_samples(), nodes
        )
        write_json(files.summary, whole.payload())
        yield Done(summary=whole.payload())

    async def run(self, *, resume: bool = False) -> ScepterSummary:
        """Run to the end and return the summary."""
        async for _ in self.stream(resume=resume):
            pass
        return self.summary


def build_summary(
    plan: ScepterConfig,
    summaries: list[dict[str, Any]],
    wall_time_s: float,
    session_samples: int,
    nodes: dict[str, str],
) -> ScepterSummary:
    """RUN/summary.json: totals over the societies, then one line per society (with the node that finished it).

    Wall time and samples/s are this session's: a resumed run counts what it wrote itself."""
    runs = [RunSummary.model_validate(s) for s in summaries]
    totals = {key: sum(int(getattr(s, key)) for s in runs) for key in TOTALS}
    return ScepterSummary(
        run=plan.run_id,
        engine=plan.engine,
        societies=len(runs),
        scenarios=plan.scenarios,
        base_seed=plan.template.seed,
        model=runs[0].model if runs else plan.template.model,
        **totals,
        wall_time_s=round(wall_time_s, 3),
        session_samples=session_samples,
        samples_per_s=round(session_samples / wall_time_s, 2) if wall_time_s > 0 else 0.0,
        per_society=[
            SocietyLine(
                society=s.run,
                scenario=s.scenario,
                world=s.world,
                seed=s.seed,
                samples_written=s.samples_written,
                outcomes=[c.outcome for c in s.cycles],
                fallbacks=s.fallbacks,
                node=nodes.get(s.run, ""),
            )
            for s in runs
        ],
    )
