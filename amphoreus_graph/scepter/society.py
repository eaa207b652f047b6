"""One society of a Scepter run, driven to its end from wherever it stands on disk.

A society with `summary.json` is done; one with a checkpoint resumes from it (the shard writer's checkpointed
offsets make its samples exactly-once); anything else starts fresh. The societies of a process share the loaded
embedder (each with a text cache of its own, so it embeds exactly as it would alone) and one bound on model calls.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.events import Repaired, RoundDone, SocietyDone
from amphoreus_graph.contracts.memory_seam import Memory
from amphoreus_graph.contracts.turn import Decision, Policy, PolicyResult, TurnContext
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.policy.discretion import Reconsiders
from amphoreus_graph.scepter.progress import SocietyProgress
from amphoreus_graph.society.runner import (
    RunConfig,
    Simulation,
    open_society_memory,
    run_policy,
)

Status = Literal["new", "started", "done"]


class Instrument(Protocol):
    """Wraps what a society uses (the benchmark times them); the default leaves them alone."""

    def policy(self, society: str, policy: Policy) -> Policy: ...

    def memory(self, society: str, memory: Memory) -> Memory: ...


class NoInstrument:
    def policy(self, society: str, policy: Policy) -> Policy:
        return policy

    def memory(self, society: str, memory: Memory) -> Memory:
        return memory


class BoundedPolicy:
    """A society's policy under the process-wide bound on decisions in flight (and so on model calls)."""

    def __init__(self, inner: Policy, slots: asyncio.Semaphore) -> None:
        self.inner = inner
        self.name = inner.name
        self._slots = slots

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        async with self._slots:
            return await self.inner.adecide(turn)

    async def areconsider(
        self, turn: TurnContext, decision: Decision, result: PolicyResult, instruction: str
    ) -> Decision | None:
        """The discretion guard's second question, under the same bound (None: the inner policy cannot answer)."""
        if not isinstance(self.inner, Reconsiders):
            return None
        async with self._slots:
            return await self.inner.areconsider(turn, decision, result, instruction)


@dataclass
class Shared:
    """What the societies of one process share, and where that process runs (a Ray node's id, or "")."""

    slots: asyncio.Semaphore
    instrument: Instrument = field(default_factory=NoInstrument)
    node: str = ""


def status(cfg: RunConfig) -> Status:
    """A society with a summary is done, unless the summary says it stopped (a budget, the breaker): resumable."""
    if cfg.files.summary.is_file() and "stopped" not in read_summary(cfg):
        return "done"
    if cfg.files.checkpoint.exists():
        return "started"
    return "new"


def planned_rounds(cfg: RunConfig) -> tuple[int, int]:
    """(rounds per cycle, rounds in all) as planned; a cycle may end sooner."""
    rounds = cfg.rounds or scenario_of(cfg.scenario).rounds_per_cycle
    return rounds, rounds * cfg.cycles


def read_summary(cfg: RunConfig) -> dict[str, Any]:
    return dict(json.loads(cfg.files.summary.read_text(encoding="utf-8")))


async def run_society(cfg: RunConfig, shared: Shared) -> AsyncGenerator[dict[str, Any], None]:
    """Yield `society` progress events, then one `society_done` with the society's summary."""
    name = cfg.run_id
    rounds, total = planned_rounds(cfg)
    progress = SocietyProgress.load(cfg.out, name, total)
    progress.pid, progress.node = os.getpid(), shared.node
    state = status(cfg)
    if state == "done":
        finished = read_summary(cfg)
        progress.finish(int(finished["samples_written"]))
        yield progress.payload()
        yield SocietyDone(society=name, summary=finished).payload()
        return

    cache, calls = cfg.response_cache(), CallLog(cfg.files.calls)
    policy = run_policy(cfg, scenario_of(cfg.scenario), cache=cache, calls=calls)
    memory, close = await asyncio.to_thread(_open_memory, cfg, policy)
    try:
        sim = Simulation(
            cfg,
            policy=BoundedPolicy(shared.instrument.policy(name, policy), shared.slots),
            memory=shared.instrument.memory(name, memory),
            store=memory,
            cache=cache,
            calls=calls,
        )
        progress.save(cfg.out)  # the pid and node of whoever runs it now (the kill tests read them)
        yield progress.payload()
        async for event in sim.stream(resume=state == "started"):
            if isinstance(event, RoundDone):
                if progress.advance(event.cycle, event.round, rounds, len(event.actions)):
                    progress.save(cfg.out)
                    yield progress.payload()
            elif isinstance(event, Repaired):
                yield Repaired(message=event.message, society=name).payload()
        summary = sim.summary
    finally:
        await asyncio.to_thread(close)
        if cache is not None:
            cache.close()
    progress.finish(summary.samples_written)
    progress.save(cfg.out)
    yield progress.payload()
    yield SocietyDone(society=name, summary=summary.payload()).payload()


def _open_memory(cfg: RunConfig, policy: Policy) -> tuple[Remembrance, Any]:
    """The society's own Chroma (its directory, locked; or the server) over the process's shared model (with a text
    cache of the society's own, as every memory has)."""
    memory = open_society_memory(cfg, policy)
    client = getattr(memory.index, "client", None)  # a ChromaIndex's

    def close() -> None:
        # Stop the client's Chroma system too (chromadb keeps one per directory for the process's life
        # otherwise): a process that runs thousands of societies must not keep them all. Then free the lock.
        try:
            getattr(client, "close", lambda: None)()
        finally:
            memory.close()

    return memory, close
