"""A run's config: everything that defines it, saved as RUN/config.json so that `--resume`, a fork, the report and
the judges need only the directory."""

from __future__ import annotations

import json
import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import Field

from amphoreus_graph.atomic import write_json
from amphoreus_graph.errors import AmphoreusError, stored_model
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.backends import memory_backend
from amphoreus_graph.memory.index import MemoryBackend
from amphoreus_graph.memory.ownership import fingerprint
from amphoreus_graph.memory.store import MemorySpec
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.structured import Mode
from amphoreus_graph.models.transport import Transport
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.services import RunSettings, SocietySettings
from amphoreus_graph.society.state import CYCLES, WorldRun

CONFIG_FORMAT = 1  # bump when a field of config.json changes meaning or goes: a newer file is refused, not misread


class RunConfig(WorldRun, RunSettings):
    """Everything that defines a run: the world it lives in (WorldRun, as a graph's input says it), who decides
    (RunSettings, as Studio's settings say it), where it writes, and how models are asked. Saved as
    RUN/config.json so `--resume` needs only the directory; the CLI's options take their defaults and help from
    these fields."""

    format_version: int = Field(default=CONFIG_FORMAT, le=CONFIG_FORMAT, description="the shape of config.json")
    cycles: int = CYCLES
    out: Path = Field(default=Path("runs/default"), description="the run directory")
    name: str | None = Field(default=None, description="the run's identity (default: the run directory's name)")
    memory_dir: Path | None = Field(default=None, description="Chroma directory (default: RUN/memory)")
    temperature: float | None = Field(default=None, ge=0, description="the model's sampling temperature")
    timeout_s: float = Field(default=60.0, gt=0, le=86_400, description="seconds one model call may take")
    max_retries: int = Field(
        default=2, ge=0, le=1000, description="retries of a failed model call (ours, not the client's)"
    )
    limits: Limits = Field(default_factory=Limits, description="budgets and the circuit breaker")
    models: dict[str, str] = Field(
        default_factory=dict, description="agent or Path -> a --model string (the rest use `model`)"
    )
    cache: bool = Field(default=True, description="answer requests asked before from the response cache")
    cache_dir: Path | None = Field(default=None, description="the response cache's directory; default: the run's")
    structured: Mode = Field(
        default="auto", description="how decisions are asked for natively: a JSON schema, a forced tool call, or off"
    )
    transport: Transport = Field(
        default=Transport.LEAN,
        description="how a request is sent: lean (an OpenAI-compatible model's own payload and parser, without "
        "LangChain's wrapping, where no callback listens) or ainvoke (LangChain's public path, always)",
    )
    run_token: str = Field(default="", description="this run's identity as the owner of its memories; set at start")
    forked_from: str | None = Field(
        default=None,
        description="CYCLE/ROUND@RUN: where this run branched off another and went its own way (its rounds up to "
        "there were lived under that run's settings, not this config's)",
    )

    @property
    def run_id(self) -> str:
        """The run's identity: its memory society, its samples' run, its draws (and so what it does)."""
        return self.name or self.out.name

    @property
    def files(self) -> RunDir:
        return RunDir(self.out)

    @property
    def memory_path(self) -> Path:
        """The embedded memory store's directory (unused with `chroma_url` or `memory`)."""
        return self.memory_dir or self.files.memory

    def memory_store(self) -> MemoryBackend:
        """Where the run's memories live: the store its memory URL names, else its Chroma directory or the server
        (`memory_dir=D` is `memory="chroma://D"`, `chroma_url="http://H:P"` is `memory="chroma+http://H:P"`);
        a URL no backend takes, or given beside those two, is one line."""
        if self.memory is not None:
            if self.memory_dir is not None or self.chroma_url is not None:
                given = "--memory-dir" if self.memory_dir is not None else "--chroma-url"
                raise AmphoreusError(f"--memory {self.memory!r} and {given} both name the store; expected one")
            return memory_backend(self.memory, self.out)
        directory = self.memory_path if self.chroma_url is None else None
        return MemorySpec(directory=directory, url=self.chroma_url, embedder=self.embedder)

    def cache_file(self) -> Path | None:
        """Where the response cache lives (None: off)."""
        return RunDir(self.cache_dir or self.out).cache if self.cache else None

    def response_cache(self) -> ResponseCache | None:
        """The run's response cache, opened when a model first asks (`Simulation` opens it at the start)."""
        path = self.cache_file()
        return ResponseCache(path) if path is not None else None

    def fingerprint(self) -> str:
        """What shapes the run's memories: a resumed run must match the run that wrote them."""
        return fingerprint(scenario=self.scenario, seed=self.seed, rounds=self.rounds, embedder=self.embedder)

    def save(self) -> None:
        """Write RUN/config.json: what `--resume` reads."""
        self.out.mkdir(parents=True, exist_ok=True)
        write_json(self.files.config, json.loads(self.model_dump_json()))

    def graph_input(self) -> dict[str, Any]:
        """The recurrence graph's input for this run (RecurrenceInput's fields)."""
        return self.model_dump(include=set(WorldRun.model_fields) | {"cycles"}) | {"run_id": self.run_id}

    @classmethod
    def of_graph(cls, world: WorldRun, cycles: int, settings: SocietySettings, run_id: str) -> RunConfig:
        """The config of a run a graph set up from its input and settings alone (Studio), with absolute paths, so
        its directory can be read from anywhere. Blocking: relative directories resolve against the working
        directory (`os.getcwd`, which `langgraph dev` refuses on its event loop)."""
        elsewhere = settings.chroma_url or settings.memory  # the store is named otherwise: no directory
        memory_dir = Path(settings.memory_dir).resolve() if settings.memory_dir and not elsewhere else None
        return cls(
            **world.model_dump(include=set(WorldRun.model_fields)),
            cycles=cycles,
            **settings.model_dump(include=set(RunSettings.model_fields)),
            out=settings.run_dir_of(run_id).resolve(),
            name=run_id,
            memory_dir=memory_dir,
        )

    def settings(self) -> SocietySettings:
        shared = self.model_dump(include=set(RunSettings.model_fields))
        return SocietySettings(**shared, memory_dir=str(self.memory_path), run_dir=str(self.out))


def save_graph_config(world: WorldRun, cycles: int, settings: SocietySettings, run_id: str, *, keep: bool) -> None:
    """Write RUN/config.json for a run a graph set up from its settings alone, as the CLI's runs do, so its report,
    interviews and forks need only its directory; `keep`: leave a config already there as it is. Blocking: call
    it off the event loop."""
    config = RunConfig.of_graph(world, cycles, settings, run_id)
    if not (keep and config.files.config.exists()):
        config.save()


def stored_config(run_dir: Path) -> RunConfig:
    """RUN/config.json as the run wrote it, its `out` following the directory wherever it is now; a missing or
    damaged file is one line. The run keeps its own name wherever its directory goes: a config written before runs
    named themselves takes it from the checkpoint (whose thread is the run)."""
    stored = stored_model(RunConfig, RunDir(run_dir).config, "`amphoreus simulate`")
    update: dict[str, object] = {"out": run_dir}
    if stored.name is None and (thread := checkpoint_thread(RunDir(run_dir).checkpoint)) is not None:
        update["name"] = thread
    return stored.model_copy(update=update)


def checkpoint_thread(path: Path) -> str | None:
    """The one thread a run's checkpoint holds (None: no checkpoint, an unreadable one, or not exactly one)."""
    if not path.is_file():
        return None
    try:
        with closing(sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)) as db:
            threads = [row[0] for row in db.execute("SELECT DISTINCT thread_id FROM checkpoints LIMIT 2")]
    except sqlite3.Error:
        return None
    return str(threads[0]) if len(threads) == 1 else None
