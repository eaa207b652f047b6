"""A run's services (policy, memory, sample and chronicle writers), carried by LangGraph's `Runtime.context`.

The graphs' context is `SocietySettings`: JSON-able settings that Studio fills in (or AMPHOREUS_* environment
variables), which build the services the first time a node asks, once per run invocation. The library and the
CLI hand the graph a context that already holds ready-made services (a custom policy, an instrumented memory).
Nothing is kept per run id in the process: a Studio thread re-run with another model runs with that model.
Only resources that any run may share are cached process-wide: Chroma clients per store, loaded embedders.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Self

from pydantic import BaseModel, Field, PrivateAttr
from pydantic_settings import BaseSettings, SettingsConfigDict

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.bounds import MAX_COUNT
from amphoreus_graph.contracts.memory_seam import Memory
from amphoreus_graph.contracts.turn import Policy
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.backends import memory_backend
from amphoreus_graph.memory.importance import ImportanceRater, ModelImportance, PathImportance
from amphoreus_graph.memory.index import MemoryBackend
from amphoreus_graph.memory.reflection import ModelReflector, OfflineReflector, Reflector
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.seeds import seeds_folder
from amphoreus_graph.memory.store import MemorySpec, open_memory
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.embedder import DEFAULT_MODEL
from amphoreus_graph.models.gateway import Role, model_caller
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.checkpointer import starting_checkpoint_on_disk
from amphoreus_graph.society.chronicle import ChronicleWriter
from amphoreus_graph.society.guard import Guard, Limits
from amphoreus_graph.society.perception import TurnMemo
from amphoreus_graph.society.samples import ShardWriter


@dataclass
class Services:
    """What a run's nodes work with, loaded once for the run: its scenario (world, agents, Path catalog), policy,
    memory and writers. Nodes take them from here, never by looking a name up in the process."""

    policy: Policy
    memory: Memory
    samples: ShardWriter | None
    scenario: Scenario
    chronicle: ChronicleWriter | None = None
    recall_k: int = 5
    seeds: Path | None = None
    guard: Guard | None = None
    cache: ResponseCache | None = None  # the run's response cache, for models that keep none (a game master)
    calls: CallLog | None = None  # the run's call log, for models that keep none (a game master, a local model)
    turns: TurnMemo = field(default_factory=TurnMemo)  # the round's turns, built once for the fan-out and `record`

    async def before_filing(self) -> None:
        """In a step that files memories: wait for the checkpoint it started from, so that the store never runs
        ahead of the checkpoints; a memory that keeps nothing outside them has nothing to wait for."""
        if getattr(self.memory, "stores", True):
            await starting_checkpoint_on_disk()


class RunSettings(BaseModel):
    """Who decides, and how a run recalls: said once here, for Studio's settings and a run's config (RunConfig)."""

    model: str = Field(default="offline", description="offline | provider:model | a model name with --base-url")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint (vLLM, LM Studio, Ollama)")
    max_concurrency: int = Field(
        default=DEFAULT_CONCURRENCY, ge=1, le=MAX_COUNT, description="parallel model calls at most"
    )
    recall_k: int = Field(default=5, ge=0, le=MAX_COUNT, description="memories recalled per turn")
    chroma_url: str | None = Field(default=None, description="use a Chroma server, e.g. http://127.0.0.1:8000")
    memory: str | None = Field(
        default=None,
        description="the memory store as a URL: chroma:///PATH, chroma+http://HOST:PORT, memory:// or a scheme a "
        "package registers (instead of --memory-dir or --chroma-url)",
    )
    embedder: str = Field(default=DEFAULT_MODEL, description="sentence-transformers model name or local path")
    seeds_dir: str | None = Field(
        default=None, description="seed memories: SEEDS_DIR/<scenario>/*.yaml (default: the scenario's own)"
    )


class SocietySettings(RunSettings, BaseSettings):
    """The graphs' context: the run settings, and where memory and samples live; also read from AMPHOREUS_*
    environment variables."""

    model_config = SettingsConfigDict(env_prefix="AMPHOREUS_", frozen=True)

    memory_dir: str | None = Field(default="memory/chroma", description="embedded Chroma directory")
    runs_dir: str = Field(default="runs", description="where runs without an explicit directory write")
    run_dir: str | None = Field(default=None, description="this run's directory (samples/ goes inside)")
    _services: dict[str, Services] = PrivateAttr(default_factory=dict)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)

    def using(self, run_id: str, services: Services) -> Self:
        """These settings, with ready-made services for `run_id` (the library's custom policy or memory)."""
        self._services[run_id] = services
        return self

    def ready(self, run_id: str) -> Services | None:
        """The run's services if they are already built or handed in (no lock: one dict read)."""
        return self._services.get(run_id)

    def services(self, run_id: str, scenario: Scenario) -> Services:
        """The run's services: handed in, or built from these settings the first time a node asks."""
        with self._lock:
            if run_id not in self._services:
                self._services[run_id] = self._build(run_id, scenario)
            return self._services[run_id]

    def run_dir_of(self, run_id: str) -> Path:
        """Where a run these settings set up writes: `run_dir`, else RUNS_DIR/RUN_ID."""
        return Path(self.run_dir) if self.run_dir else Path(self.runs_dir) / run_id

    def _build(self, run_id: str, scenario: Scenario) -> Services:
        # absolute: Chroma tells its embedded stores apart by the path as given, so a relative one opened again
        # after the process changed its working directory (a notebook, a test) would reach the first one's store
        run_dir = self.run_dir_of(run_id)
        spec: MemoryBackend
        if self.memory is not None:  # a URL names the store: it goes before memory_dir, which has a default here
            spec = memory_backend(self.memory, run_dir.resolve())
        else:
            directory = Path(self.memory_dir).resolve() if self.memory_dir and self.chroma_url is None else None
            spec = MemorySpec(directory=directory, url=self.chroma_url, embedder=self.embedder)
        # answers kept as the CLI keeps them: a thread re-run asks nothing twice, and a fork can replay the run
        cache = ResponseCache(RunDir(run_dir).cache)
        policy = resolve_model(self.model, base_url=self.base_url, max_concurrency=self.max_concurrency, cache=cache)
        return Services(
            policy=policy,
            memory=build_memory(spec, run_id, scenario, policy, embedder=self.embedder, shared=True),
            samples=ShardWriter(RunDir(run_dir).samples),
            scenario=scenario,
            chronicle=ChronicleWriter(run_dir),
            recall_k=self.recall_k,
            seeds=seeds_folder(scenario, self.seeds_dir),
            guard=Guard(Limits(), self.model, str(run_dir)),
            cache=cache,
        )


@cache
def default_settings() -> SocietySettings:
    """The context of a graph invoked without one (`graph.invoke({})`): settings from the environment."""
    return SocietySettings()


def build_memory(
    spec: MemoryBackend,
    society: str,
    scenario: Scenario,
    policy: Policy,
    *,
    embedder: str | None = None,
    shared: bool = False,
) -> Remembrance:
    """A society's memory set up from its scenario, in the store `spec` names (`shared`: through the process's
    one client of it); a policy that asks a chat model also has it rate importance and reflect (counted under
    those roles)."""
    importance = PathImportance(scenario)
    offline = OfflineReflector(scenario.agent_names, scenario.catalog)
    reflector: Reflector = offline
    rater: ImportanceRater = importance
    if (caller := model_caller(policy)) is not None:  # a model decides: it also rates, reflects
        rater = ModelImportance(caller.for_role(Role.IMPORTANCE), importance, scenario.world.description)
        reflector = ModelReflector(caller.for_role(Role.REFLECT), offline)
    return open_memory(
        spec,
        society,
        scenario.agent_names,
        embedder=embedder,
        shared=shared,
        config=scenario.memory,
        paths={a.name: a.path for a in scenario.agents},
        rater=rater,
        reflector=reflector,
    )
