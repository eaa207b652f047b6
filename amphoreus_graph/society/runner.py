"""Simulation: a run of the recurrence graph on disk (SQLite checkpoint, Chroma memory, sample shards).

The CLI is a thin shell around this; library users get the same thing in a few lines:

    sim = Simulation(RunConfig(scenario="amphoreus", cycles=2, out=Path("runs/demo")))
    async for event in sim.stream():
        ...
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from pydantic import BaseModel, Field, ValidationError

from amphoreus_graph.atomic import write_json
from amphoreus_graph.data.samples import ShardWriter
from amphoreus_graph.errors import AmphoreusError, format_validation_error
from amphoreus_graph.memory.embedder import DEFAULT_MODEL
from amphoreus_graph.memory.seeds import load_seeds, seeds_folder
from amphoreus_graph.memory.store import ChromaMemory, Memory, open_chroma
from amphoreus_graph.policy.base import Policy
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.chronicle import ChronicleWriter
from amphoreus_graph.society.graph import scenario_of
from amphoreus_graph.society.recurrence import build_recurrence_graph
from amphoreus_graph.society.services import (
    Services,
    SocietySettings,
    build_memory,
    register_services,
    unregister_services,
)

CONFIG_FILE = "config.json"
CHECKPOINT_FILE = "checkpoint.sqlite"
SUMMARY_FILE = "summary.json"


class RunConfig(BaseModel):
    """Everything that defines a run; saved as RUN/config.json so `--resume` needs only the directory."""

    scenario: str = "amphoreus"
    cycles: int = Field(default=2, ge=1)
    rounds: int | None = Field(default=None, ge=1)
    model: str = "offline"
    base_url: str | None = None
    seed: int = 7
    out: Path = Path("runs/default")
    max_concurrency: int = Field(default=16, ge=1)
    memory_dir: Path | None = Field(default=None, description="default: RUN/memory")
    chroma_url: str | None = None
    recall_k: int = Field(default=5, ge=0)
    embedder: str = DEFAULT_MODEL
    seeds_dir: str = "memory/seeds"

    @property
    def run_id(self) -> str:
        return self.out.name

    def settings(self) -> SocietySettings:
        return SocietySettings(
            model=self.model,
            base_url=self.base_url,
            max_concurrency=self.max_concurrency,
            recall_k=self.recall_k,
            memory_dir=str(self.memory_dir or self.out / "memory"),
            chroma_url=self.chroma_url,
            embedder=self.embedder,
            run_dir=str(self.out),
            seeds_dir=self.seeds_dir,
        )


class Simulation:
    """One run on disk. `stream()` yields progress events and ends with {"type": "done", "summary": …}."""

    def __init__(self, config: RunConfig, *, policy: Policy | None = None, memory: Memory | None = None) -> None:
        self.config = config
        self._policy = policy
        self._memory = memory
        self.summary: dict[str, Any] | None = None

    @classmethod
    def resume(cls, run_dir: Path, *, policy: Policy | None = None) -> Simulation:
        """Reopen a run from its directory; its checkpoint decides where it goes on."""
        path = run_dir / CONFIG_FILE
        if not path.is_file():
            raise AmphoreusError(f"{path}: no such file; expected a run directory written by `amphoreus simulate`")
        try:
            config = RunConfig.model_validate_json(path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise AmphoreusError(format_validation_error(str(path), exc)) from None
        return cls(config.model_copy(update={"out": run_dir}), policy=policy)

    def _services(self, policy: Policy) -> tuple[Services, ChromaMemory | None]:
        cfg = self.config
        scenario = scenario_of(cfg.scenario)
        owned: ChromaMemory | None = None
        memory = self._memory
        if memory is None:
            client, lock = open_chroma(cfg.memory_dir or cfg.out / "memory", cfg.chroma_url)
            owned = build_memory(client, cfg.run_id, scenario, cfg.embedder, policy, lock)
            memory = owned
        services = Services(
            policy=policy,
            memory=memory,
            samples=ShardWriter(cfg.out / "samples"),
            chronicle=ChronicleWriter(cfg.out),
            recall_k=cfg.recall_k,
            seeds_dir=cfg.seeds_dir,
        )
        return services, owned

    async def stream(self, *, resume: bool = False) -> AsyncGenerator[dict[str, Any], None]:
        """Run (or resume) to the end, yielding the graph's progress events as they happen."""
        cfg = self.config
        # A broken scenario, seed file or model spec fails here, before anything is written.
        scenario = scenario_of(cfg.scenario)
        load_seeds(seeds_folder(cfg.seeds_dir, scenario.name), scenario.heir_names)
        policy = self._policy or resolve_model(cfg.model, base_url=cfg.base_url, max_concurrency=cfg.max_concurrency)
        checkpoint = cfg.out / CHECKPOINT_FILE
        if not resume and checkpoint.exists():
            raise AmphoreusError(f"{cfg.out}: already holds a run; expected a new --out, or --resume {cfg.out}")
        if resume and not checkpoint.exists():
            raise AmphoreusError(f"{checkpoint}: no checkpoint to resume from; expected a run directory")
        cfg.out.mkdir(parents=True, exist_ok=True)
        if not resume:
            write_json(cfg.out / CONFIG_FILE, json.loads(cfg.model_dump_json()))
        services, owned = self._services(policy)
        register_services(cfg.run_id, services)
        started = time.perf_counter()
        thread: RunnableConfig = {"configurable": {"thread_id": cfg.run_id}, "recursion_limit": 1_000_000}
        try:
            async with AsyncSqliteSaver.from_conn_string(str(checkpoint)) as saver:
                graph = build_recurrence_graph().compile(checkpointer=saver)
                state = await graph.aget_state(thread)
                start: dict[str, Any] | None = None
                if not resume or not state.values:  # a run killed before its first checkpoint starts over
                    start = {
                        "scenario": cfg.scenario,
                        "seed": cfg.seed,
                        "cycles": cfg.cycles,
                        "rounds": cfg.rounds,
                        "run_id": cfg.run_id,
                    }
                if start is not None or state.next or state.tasks:  # tasks: done but not yet checkpointed
                    async for event in graph.astream(start, thread, context=cfg.settings(), stream_mode="custom"):
                        yield event
                final = (await graph.aget_state(thread)).values
        finally:
            unregister_services(cfg.run_id)
            if owned is not None:
                owned.close()
        self.summary = build_summary(cfg, final, services.policy.name, time.perf_counter() - started)
        write_json(cfg.out / SUMMARY_FILE, self.summary)
        yield {"type": "done", "summary": self.summary}

    async def run(self, *, resume: bool = False) -> dict[str, Any]:
        """Run to the end and return the summary."""
        async for _ in self.stream(resume=resume):
            pass
        assert self.summary is not None
        return self.summary


def build_summary(cfg: RunConfig, state: dict[str, Any], model: str, wall_time_s: float) -> dict[str, Any]:
    """RUN/summary.json: outcomes, Coreflames per heir, samples, model calls, tokens, faults, wall time."""
    stats = {k: int(v) for k, v in (state.get("stats") or {}).items()}
    cycles = state.get("cycle_summaries") or []
    per_heir: dict[str, int] = {}
    for cycle in cycles:
        for heir, count in cycle["coreflames"].items():
            per_heir[heir] = per_heir.get(heir, 0) + count
    return {
        "run": cfg.run_id,
        "scenario": cfg.scenario,
        "model": model,
        "seed": cfg.seed,
        "cycles": cycles,
        "coreflames_per_heir": per_heir,
        "samples_written": stats.get("samples_written", 0),
        "turns": stats.get("turns", 0),
        "model_calls": stats.get("model_calls", 0),
        "tokens_in": stats.get("tokens_in", 0),
        "tokens_out": stats.get("tokens_out", 0),
        "failures": stats.get("failures", 0),
        "fallbacks": stats.get("fallbacks", 0),
        "repaired": stats.get("repaired", 0),
        "wall_time_s": round(wall_time_s, 3),
    }
