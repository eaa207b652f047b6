"""Run-level services (policy, memory, sample and chronicle writers) resolved from JSON-able settings.

The graph's Runtime context is `SocietySettings`, which Studio can fill in; the heavy objects it names
are built once per process and run, or registered ready-made by the library (a custom chat model).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path

from chromadb.api import ClientAPI
from chromadb.errors import ChromaError
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from amphoreus_graph.data.samples import ShardWriter
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.embedder import DEFAULT_MODEL, default_embedder
from amphoreus_graph.memory.importance import ImportanceRater, ModelImportance, PathImportance
from amphoreus_graph.memory.reflection import ModelReflector, OfflineReflector, Reflector
from amphoreus_graph.memory.store import ChromaMemory, Memory, StoreLock, open_chroma
from amphoreus_graph.policy.base import Policy
from amphoreus_graph.policy.llm import LLMPolicy
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.scenario import Scenario
from amphoreus_graph.society.chronicle import ChronicleWriter


class SocietySettings(BaseSettings):
    """Who decides and where memory and samples live; also read from AMPHOREUS_* environment variables."""

    model_config = SettingsConfigDict(env_prefix="AMPHOREUS_", frozen=True)

    model: str = Field(default="offline", description="offline, provider:model, or a name with base_url")
    base_url: str | None = Field(default=None, description="an OpenAI-compatible endpoint (vLLM, Ollama…)")
    max_concurrency: int = Field(default=16, ge=1, description="parallel model calls at most")
    recall_k: int = Field(default=5, ge=0, description="memories recalled per turn")
    memory_dir: str | None = Field(default="memory/chroma", description="embedded Chroma directory")
    chroma_url: str | None = Field(default=None, description="a Chroma server, instead of memory_dir")
    embedder: str = Field(default=DEFAULT_MODEL, description="sentence-transformers model name or path")
    runs_dir: str = Field(default="runs", description="where runs without an explicit directory write")
    run_dir: str | None = Field(default=None, description="this run's directory (samples/ goes inside)")
    seeds_dir: str = Field(default="memory/seeds", description="seed memories: SEEDS_DIR/<scenario>/*.yaml")


@dataclass
class Services:
    policy: Policy
    memory: Memory
    samples: ShardWriter | None
    chronicle: ChronicleWriter | None = None
    recall_k: int = 5
    seeds_dir: str = "memory/seeds"


def build_memory(
    client: ClientAPI, society: str, scenario: Scenario, embedder: str, policy: Policy, lock: StoreLock | None = None
) -> ChromaMemory:
    """A society's Chroma memory set up from its scenario; a chat-model policy also rates and reflects."""
    importance = PathImportance(scenario)
    offline = OfflineReflector(scenario.heir_names)
    reflector: Reflector = offline
    rater: ImportanceRater = importance
    if isinstance(policy, LLMPolicy):
        rater = ModelImportance(policy.model, importance)
        reflector = ModelReflector(policy.model, offline)
    return ChromaMemory(
        client,
        society,
        scenario.heir_names,
        default_embedder(embedder),
        lock,
        config=scenario.memory,
        paths={h.name: h.path for h in scenario.heirs},
        rater=rater,
        reflector=reflector,
    )


def open_store(persist_dir: Path | None, url: str | None) -> tuple[ClientAPI, StoreLock | None]:
    """`open_chroma`, with a store that cannot be opened (damaged files, no server there) as one line."""
    try:
        return open_chroma(persist_dir, url)
    except (ChromaError, ValueError, OSError) as exc:
        where = url or persist_dir or "in-memory Chroma"
        problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise AmphoreusError(f"{where}: cannot open the memory store ({problem}); expected a Chroma store") from None


_lock = threading.Lock()
_registered: dict[str, Services] = {}
_clients: dict[tuple[str | None, str | None], tuple[ClientAPI, StoreLock | None]] = {}


def register_services(run_id: str, services: Services) -> None:
    """Use these ready-made services for `run_id` (the library does this for a custom policy)."""
    with _lock:
        _registered[run_id] = services


def unregister_services(run_id: str) -> None:
    with _lock:
        _registered.pop(run_id, None)


def services_for(settings: SocietySettings | None, run_id: str, scenario: Scenario) -> Services:
    """The services of a run: registered ones, else built from the settings once per process."""
    with _lock:
        if run_id in _registered:
            return _registered[run_id]
        settings = settings or SocietySettings()
        key = (settings.memory_dir if settings.chroma_url is None else None, settings.chroma_url)
        if key not in _clients:
            _clients[key] = open_store(Path(key[0]) if key[0] else None, key[1])
        client, _ = _clients[key]
        run_dir = Path(settings.run_dir) if settings.run_dir else Path(settings.runs_dir) / run_id
        policy = resolve_model(settings.model, base_url=settings.base_url, max_concurrency=settings.max_concurrency)
        services = Services(
            policy=policy,
            memory=build_memory(client, run_id, scenario, settings.embedder, policy),
            samples=ShardWriter(run_dir / "samples"),
            chronicle=ChronicleWriter(run_dir),
            recall_k=settings.recall_k,
            seeds_dir=settings.seeds_dir,
        )
        _registered[run_id] = services
        return services
