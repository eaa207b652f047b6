"""Simulation: a run of the recurrence graph on disk (SQLite checkpoint, Chroma memory, sample shards).

The CLI is a thin shell around this; library users get the same thing in a few lines:

    sim = Simulation(RunConfig(scenario="amphoreus", cycles=2, out=Path("runs/demo")))
    async for event in sim.stream():  # typed events (contracts/events.py)
        ...
    sim.summary  # a RunSummary
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncGenerator
from functools import cached_property, reduce
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import StateSnapshot

from amphoreus_graph.atomic import write_json
from amphoreus_graph.catalogs.scenario import Scenario, scenario_of
from amphoreus_graph.contracts.events import Done, ProgressEvent, Repaired, parse_event
from amphoreus_graph.contracts.memory_seam import Memory, Prefetching
from amphoreus_graph.contracts.turn import Policy
from amphoreus_graph.errors import AmphoreusError, RunStopped
from amphoreus_graph.memory.ownership import StoreOwner
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.seeds import load_seeds, seeds_folder
from amphoreus_graph.memory.store import MemorySpec, check_memory, ready_to_open
from amphoreus_graph.memory.tally import Tally
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.gateway import RoleUse, counted_use, merge_use, unreachable_server
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.policy.routing import routed
from amphoreus_graph.society.checkpointer import RunCheckpointer, checkpointer
from amphoreus_graph.society.chronicle import ChronicleWriter
from amphoreus_graph.society.config import RunConfig, stored_config
from amphoreus_graph.society.guard import Guard
from amphoreus_graph.society.heap import settle_heap
from amphoreus_graph.society.ownership import check_store_tally, checkpoint_tick, claim_store
from amphoreus_graph.society.recurrence import build_recurrence_graph
from amphoreus_graph.society.run_dir import (
    check_seeds_dir,
    checked_rows,
    checkpointed_values,
    claim_run_dir,
    prepare_run_dir,
    writable_dir,
)
from amphoreus_graph.society.samples import ShardWriter, count_rows
from amphoreus_graph.society.services import Services, build_memory
from amphoreus_graph.society.shards import cut_uncommitted, verify_shards
from amphoreus_graph.society.summary import AgentUse, CacheUse, RunSummary

__all__ = ["RunConfig", "Simulation", "build_summary"]


def open_society_memory(cfg: RunConfig, policy: Policy, scenario: Scenario | None = None) -> Remembrance:
    """The run's own memory (its Chroma directory, locked, the server, or the store its memory URL names), with
    one-line errors for a bad store; `scenario`: the run's loaded one (default: read by the name the config gives)."""
    spec = cfg.memory_store()
    if isinstance(spec, MemorySpec) and spec.directory is not None:
        writable_dir(spec.directory, "--memory" if cfg.memory is not None else "--memory-dir")
    scenario = scenario_of(cfg.scenario) if scenario is None else scenario
    return build_memory(spec, cfg.run_id, scenario, policy, embedder=cfg.embedder)


class Simulation:
    """One run on disk. `stream()` yields its typed progress events and ends with `Done`; `summary` is then the
    run's `RunSummary` (what summary.json holds).

    `memory` replaces the memory the run would open for itself (`store` is then the Remembrance behind it,
    if any, whose ownership the run checks); `fresh_memory` wipes the society's memories in the store first."""

    def __init__(
        self,
        config: RunConfig,
        *,
        policy: Policy | None = None,
        memory: Memory | None = None,
        store: Remembrance | None = None,
        fresh_memory: bool = False,
        api_key: str | None = None,
        cache: ResponseCache | None = None,
        calls: CallLog | None = None,
    ) -> None:
        """`cache`: the response cache the run's models answer from (default: the run's own, per its config);
        `calls`: the call log its models write to (default: the run's own, RUN/calls.jsonl)."""
        self.config = config
        self.api_key = api_key  # never written to config.json: give it again (or its env var) on --resume
        self._policy = policy
        if memory is not None:
            check_memory(memory)
        self._memory = memory
        self._store = store
        self.fresh_memory = fresh_memory
        self._repairs: list[str] = []  # what the store's check rebuilt or moved aside, said as the run starts
        self._summary: RunSummary | None = None
        self._cache = cache if cache is not None else config.response_cache()
        self._calls = calls or CallLog(config.files.calls)  # every request sent, whatever a kill loses of the state

    @classmethod
    def resume(
        cls,
        run_dir: Path,
        *,
        policy: Policy | None = None,
        fresh_memory: bool = False,
        limits: dict[str, Any] | None = None,
        api_key: str | None = None,
    ) -> Simulation:
        """Reopen a run from its directory; its checkpoint decides where it goes on. `limits` changes its budgets
        or circuit breaker (a run stopped by a budget goes on with a higher one), and is saved with the run once it
        goes on (a resume refused in one line changes nothing)."""
        config = stored_config(run_dir)
        if limits:
            config.limits = config.limits.model_copy(update=limits)
        return cls(config, policy=policy, fresh_memory=fresh_memory, api_key=api_key)

    @cached_property
    def scenario(self) -> Scenario:
        """The run's scenario, read once: every step of the run gets it through the run's services."""
        return scenario_of(self.config.scenario)

    def _services(self, policy: Policy) -> tuple[Services, Remembrance | None]:
        cfg = self.config
        owned: Remembrance | None = None
        memory = self._memory
        if memory is None:
            owned = open_society_memory(cfg, policy, self.scenario)
            memory = owned
        services = Services(
            policy=policy,
            memory=memory,
            samples=ShardWriter(cfg.files.samples),
            scenario=self.scenario,
            chronicle=ChronicleWriter(cfg.out),
            recall_k=cfg.recall_k,
            seeds=seeds_folder(self.scenario, cfg.seeds_dir),
            guard=Guard(cfg.limits, cfg.model, str(cfg.out), self._calls),
            cache=self._cache,
            calls=self._calls,
        )
        return services, owned

    async def stream(self, *, resume: bool = False) -> AsyncGenerator[ProgressEvent, None]:
        """Run (or resume) to the end, yielding the graph's progress events as they happen, typed (the graphs write
        them as JSON dicts, for Studio; `event.payload()` is that dict again). The run directory is claimed (one
        process at a time) before anything is written, and held until the summary is."""
        policy = await self._preflight()
        lock = await asyncio.to_thread(claim_run_dir, self.config.out, resume=resume)
        try:
            await asyncio.to_thread(self._prepare, resume)
            for line in self._repairs:
                yield Repaired(message=line)
            cfg = self.config = self._identified(resume)
            started = time.perf_counter()
            thread: RunnableConfig = {"configurable": {"thread_id": cfg.run_id}, "recursion_limit": 1_000_000}
            services, owned = await asyncio.to_thread(self._services, policy)
            store = self._store or owned
            try:
                if not resume:  # claimed before anything of the run is written: a refused run leaves no trace
                    if store is not None:
                        await asyncio.to_thread(self._claim, store, resume=False, values={})
                    cfg.save()
                async with checkpointer(cfg.files.checkpoint) as saver:
                    graph = build_recurrence_graph().compile(checkpointer=saver)
                    values, state, repairs = await self._checked_past(graph, saver, thread, store, resume)
                    if resume and cfg.limits != stored_config(cfg.out).limits:  # new budgets go on with the run
                        await asyncio.to_thread(cfg.save)
                    for line in repairs:
                        yield Repaired(message=line)
                    # a new run, or one killed before its first checkpoint, starts from the beginning
                    start = None if values else cfg.graph_input()
                    context = cfg.settings().using(cfg.run_id, services)
                    stopped: RunStopped | None = None
                    try:
                        if start is not None or state.next or state.tasks:  # tasks: done but not yet checkpointed
                            settle_heap()  # everything the run loaded is in: full collections skip it from here
                            # Checkpoints are written behind the steps; a step that files memories waits for its
                            # own (society/checkpointer.py), so the store never runs ahead of them.
                            steps = graph.astream(
                                start, thread, context=context, stream_mode="custom", durability="async"
                            )
                            async for event in steps:
                                yield parse_event(event)
                    except RunStopped as stop:  # a budget or the circuit breaker, as a round opened: checkpointed
                        stopped = stop
                    final = (await graph.aget_state(thread)).values
                    unclaimed = {}
                    if isinstance(services.memory, Prefetching):  # head starts of a round not filed
                        unclaimed = await asyncio.to_thread(services.memory.settle)
                    if unclaimed:
                        final = {**final, "model_use": merge_use(final.get("model_use"), unclaimed)}
            finally:
                if owned is not None:
                    owned.close()
                if self._cache is not None:
                    self._cache.close()
                self._calls.close()
            why = None if stopped is None else str(stopped)
            elapsed = time.perf_counter() - started
            summary = build_summary(
                cfg, services.scenario, final, services.policy.name, elapsed, why, self._calls.totals()
            )
            self._summary = summary
            write_json(cfg.files.summary, summary.payload())
        finally:
            lock.release()
        if stopped is not None:
            raise stopped
        yield Done(summary=summary.payload())

    @property
    def summary(self) -> RunSummary:
        """The run's summary, once `stream()` or `run()` has taken it to its end."""
        if self._summary is None:
            raise AmphoreusError("the run has no summary yet; expected `stream()` or `run()` to its end first")
        return self._summary

    def _identified(self, resume: bool) -> RunConfig:
        """The config with the run's identity: a resumed run's own token; a new run's name written down, so that
        it stays itself wherever its directory goes."""
        cfg = self.config
        if resume:
            return cfg.model_copy(update={"run_token": stored_config(cfg.out).run_token})
        return cfg.model_copy(update={"run_token": uuid.uuid4().hex, "name": cfg.run_id})

    async def _checked_past(
        self,
        graph: CompiledStateGraph[Any, Any, Any, Any],
        saver: RunCheckpointer,
        thread: RunnableConfig,
        store: Remembrance | None,
        resume: bool,
    ) -> tuple[dict[str, Any], StateSnapshot, list[str]]:
        """What the checkpoint committed, once its own rows, the memory store and every shard are checked against it
        (shards repaired exactly where they can be: one line each); a new run's leftovers never committed are cut."""
        cfg = self.config
        if resume and (damage := await checked_rows(saver, cfg.files.checkpoint)) is not None:
            raise AmphoreusError(
                f"{cfg.files.checkpoint}: damaged: {damage}; expected the run's own checkpoint back, or "
                f"--resume {cfg.out} --fresh-memory to restart the run from its beginning"
            )
        values = await checkpointed_values(graph, thread, cfg.files.checkpoint) if resume else {}
        state = await graph.aget_state(thread)
        if resume and store is not None:
            await asyncio.to_thread(self._claim, store, resume=True, values=values)
            await asyncio.to_thread(check_store_tally, store, values, state.next, self._where())
        if not values:  # nothing was committed: whatever a shard holds was never checkpointed
            cut_uncommitted(cfg.out, {})
            return values, state, []
        return values, state, await verify_shards(graph, thread, cfg.out, values, self.scenario)

    async def _preflight(self) -> Policy:
        """The run's policy, once everything a user can get wrong is checked: a broken scenario, seed file, model
        spec or unreachable server fails here, before anything is written."""
        cfg = self.config
        scenario = self.scenario
        check_seeds_dir(cfg.seeds_dir)
        load_seeds(seeds_folder(scenario, cfg.seeds_dir), scenario.agent_names)
        policy = self._policy or run_policy(cfg, scenario, cache=self._cache, calls=self._calls, api_key=self.api_key)
        if (unreachable := await asyncio.to_thread(unreachable_server, policy)) is not None:
            raise RunStopped(f"{unreachable}; nothing was run (start the server, or check --base-url)")
        if self.fresh_memory and self._memory is not None:
            raise AmphoreusError("--fresh-memory wipes the memory a run opens itself; expected no memory passed in")
        if self._memory is None:
            cfg.memory_store()  # a memory URL no backend takes
        return policy

    def _prepare(self, resume: bool) -> None:
        """With the run directory claimed: check it holds no run (a new one) or its run (a resume), and that the
        response cache opens (unusable: one line now)."""
        cfg = self.config
        if self._memory is None:  # before the checkpoint is discarded: a store that cannot be rebuilt refuses here
            self._repairs = ready_to_open(cfg.memory_store(), cfg.run_id, fresh_memory=self.fresh_memory)
        prepare_run_dir(cfg.out, resume=resume, restart=self.fresh_memory)
        self._calls.read()  # what earlier processes of the run sent (a damaged log: one line)
        if self._cache is not None and (self._cache.users or self._cache.path.exists()):
            self._cache.open()

    def _claim(self, store: Remembrance, *, resume: bool, values: dict[str, Any]) -> None:
        cfg = self.config
        scenario = self.scenario
        owner = StoreOwner(token=cfg.run_token, run_dir=str(cfg.out), fingerprint=cfg.fingerprint())
        position = checkpoint_tick(values, cfg.rounds or scenario.rounds_per_cycle)
        filed = Tally.of_json(values["memory_tally"]).records if values.get("memory_tally") else 0
        spec = cfg.memory_store()
        own_store = isinstance(spec, MemorySpec) and spec.directory == cfg.files.memory
        claim_store(
            store,
            owner,
            resume=resume,
            checkpoint=position,
            where=self._where(),
            fresh=self.fresh_memory,
            filed=filed,
            own_store=own_store,
        )

    def _where(self) -> str:
        """The memory store, as a user named it."""
        return self.config.memory or self.config.chroma_url or str(self.config.memory_path)

    async def run(self, *, resume: bool = False) -> RunSummary:
        """Run to the end and return the summary."""
        async for _ in self.stream(resume=resume):
            pass
        return self.summary


def run_policy(
    cfg: RunConfig,
    scenario: Scenario,
    *,
    cache: ResponseCache | None,
    calls: CallLog | None = None,
    api_key: str | None = None,
) -> Policy:
    """A run's decider: its `model`, with the scenario's and the run's routes per agent or Path, every model
    behind the gateway with the run's settings (key, timeout, retries, temperature, concurrency, cache, call log)."""

    def resolve(spec: str) -> Policy:
        return resolve_model(
            spec,
            base_url=cfg.base_url,
            api_key=api_key,
            max_concurrency=cfg.max_concurrency,
            timeout_s=cfg.timeout_s,
            attempts=cfg.max_retries + 1,
            temperature=cfg.temperature,
            cache=cache,
            structured=cfg.structured,
            transport=cfg.transport,
            log=calls,
        )

    known = set(scenario.agent_names) | {a.path for a in scenario.agents}
    return routed(resolve(cfg.model), {**scenario.settings.models, **cfg.models}, known, resolve)


def cache_summary(cfg: RunConfig, roles: dict[str, RoleUse]) -> CacheUse:
    """The response cache's part of summary.json: where it is, its hits, and what they would have cost (tokens,
    and money where --prices names the model) had they been sent."""
    hits = sum(use.cache_hits for use in roles.values())
    tokens_in = sum(use.cached_tokens_in for use in roles.values())
    tokens_out = sum(use.cached_tokens_out for use in roles.values())
    saved: dict[str, int | float] = {"tokens_in": tokens_in, "tokens_out": tokens_out}
    if (price := cfg.limits.prices.get(cfg.model)) is not None:
        saved["cost"] = round(tokens_in / 1000 * price.input_per_1k + tokens_out / 1000 * price.output_per_1k, 6)
    path = cfg.cache_file()
    if path is not None and path.exists():
        shown: str | None = path.name if path.parent == cfg.out else str(path)  # a run's own moves with it
    else:
        shown = None  # off, or no model asked
    return CacheUse(file=shown, hits=hits, would_have_cost=saved)


def build_summary(
    cfg: RunConfig,
    scenario: Scenario,
    state: dict[str, Any],
    model: str,
    wall_time_s: float,
    stopped: str | None = None,
    logged: dict[str, Any] | None = None,
) -> RunSummary:
    """RUN/summary.json: each cycle's outcome in the world's words, each agent's tally over the cycles, samples,
    and every model call by role (calls, failures by kind, retries, repairs, fallbacks, tokens, latency) and by
    agent, with totals; wall time. `logged`: what the run's call log saw sent (`counted_use`): the calls of steps a
    kill cut short, which no checkpoint counted, are in the totals by role, not in an agent's."""
    stats = {k: int(v) for k, v in (state.get("stats") or {}).items()}
    cycles = state.get("cycle_summaries") or []
    tally: dict[str, float] = {}
    for cycle in cycles:
        for agent, count in cycle["tally"].items():
            tally[agent] = tally.get(agent, 0.0) + count
    roles = counted_use(state.get("model_use"), logged)
    per_agent = {}
    for agent, uses in sorted((state.get("agent_use") or {}).items()):
        use = reduce(RoleUse.add, (RoleUse.model_validate(u) for u in uses.values()), RoleUse())
        per_agent[agent] = AgentUse(calls=use.calls, tokens_in=use.tokens_in, tokens_out=use.tokens_out)
    return RunSummary(
        run=cfg.run_id,
        scenario=cfg.scenario,
        model=model,
        seed=cfg.seed,
        cycles=cycles,
        world=scenario.name,
        score_label=scenario.world.labels.score,
        tally_per_agent=tally,
        samples_written=count_rows(cfg.files.samples),
        turns=stats.get("turns", 0),
        fallbacks=stats.get("fallbacks", 0),
        repaired=stats.get("repaired", 0),
        secret_repaired=stats.get("secret_repaired", 0),
        secret_redacted=stats.get("secret_redacted", 0),
        model_calls=sum(use.calls for use in roles.values()),
        failures=sum(sum(use.failures.values()) for use in roles.values()),
        tokens_in=sum(use.tokens_in for use in roles.values()),
        tokens_out=sum(use.tokens_out for use in roles.values()),
        cache=cache_summary(cfg, roles),
        models={role: use.summary() for role, use in roles.items()},
        per_agent=per_agent,
        wall_time_s=round(wall_time_s, 3),
        stopped=stopped,
    )
