"""A finished (or stopped) run's memory, reopened read-only: `amphoreus memory inspect`, interviews and the run
report.

Read-only for real: Chroma writes to a store it opens (its SQLite journal and migrations, our lock file) and
LangGraph's saver to a checkpoint it reads (its WAL files, its tables made if missing), so a read opens copies of
them in a temporary folder. Nothing in the run changes, and a run in a read-only place can still be read. The copy
costs a moment and the store's size on the temporary disk; a store a live run holds is refused, not copied mid-write.
"""

from __future__ import annotations

import asyncio
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from amphoreus_graph.catalogs.names import shown
from amphoreus_graph.catalogs.scenario import Scenario, load_scenario
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir
from amphoreus_graph.memory.chroma_index import StoreLock
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.store import MemorySpec, held_in_process
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.society.checkpointer import checkpointer
from amphoreus_graph.society.config import stored_config
from amphoreus_graph.society.recurrence import build_recurrence_graph
from amphoreus_graph.society.services import build_memory


@contextmanager
def run_memory(run: Path) -> Iterator[tuple[Scenario, Remembrance]]:
    """The run's scenario and its memory, where `config.json` says it lives (directory, server, or the store its
    memory URL names).

    A store directory that is not there is one line: opening it would create an empty store, and every agent
    would seem to remember nothing."""
    config = stored_config(run)
    scenario = load_scenario(config.scenario)
    spec = config.memory_store()
    memory_dir = spec.directory if isinstance(spec, MemorySpec) else None
    if memory_dir is not None and not memory_dir.is_dir():
        raise AmphoreusError(f"{memory_dir}: no such directory; expected the run's memory store (see its config.json)")
    with read_copy(memory_dir) as copied:
        if copied is not None:
            spec = MemorySpec(directory=copied, scratch=True)
        memory = build_memory(spec, config.run_id, scenario, OfflinePathPolicy(), embedder=config.embedder)
        try:
            yield scenario, memory
        finally:
            memory.close()


@contextmanager
def read_copy(store: Path | None) -> Iterator[Path | None]:
    """A copy of an embedded store's directory to open instead of it (None for none: a server's store); one line
    for a store a live run holds or one that cannot be read. A store this process holds already (the Studio
    server's own) is read through its client, which is the only one that may: no copy."""
    if store is None or held_in_process(store):
        yield store
        return
    if StoreLock.held(store):
        raise AmphoreusError(f"{store}: memory store is in use by a running simulation; expected it free (wait for it)")
    with tempfile.TemporaryDirectory(prefix="amphoreus-read-") as folder:
        copied = Path(folder) / store.name
        try:
            shutil.copytree(store, copied, ignore=shutil.ignore_patterns("amphoreus.lock"))
        except OSError as exc:
            problem = f"cannot read the memory store ({exc}); expected a readable Chroma store"
            raise AmphoreusError(f"{store}: {problem}") from None
        yield copied


def inspect_recall(run: Path, agent: str, query: str, k: int) -> tuple[Moment, list[RecalledMemory]]:
    """Recall for one agent as of the run's last moment (recall is read-only: nothing is marked accessed)."""
    with run_memory(run) as (scenario, memory):
        return recall_at_end(scenario, memory, agent, query, k, unfiled_events(run))


def unfiled_events(run: Path) -> list[MemoryEvent]:
    """The events a run's checkpoint holds that its store does not yet: the last round of a run stopped between
    rounds (a budget, the breaker, a kill), filed behind the round that never came. `--resume` files them."""
    path = RunDir(run).checkpoint
    if not path.is_file():
        return []
    with tempfile.TemporaryDirectory(prefix="amphoreus-read-") as folder:
        try:
            for part in RunDir(run).checkpoint_files()[:2]:  # the file and its write-ahead log (-shm is rebuilt)
                if part.is_file():
                    shutil.copyfile(part, Path(folder) / part.name)
            values = _checkpointed_values(Path(folder) / path.name, stored_config(run).run_id)
        except (sqlite3.DatabaseError, OSError) as exc:
            raise AmphoreusError(f"{path}: not a readable checkpoint ({exc}); expected the run's SQLite file") from None
    return [MemoryEvent.model_validate(e) for e in values.get("round_events") or []]


def _checkpointed_values(path: Path, thread_id: str) -> dict[str, Any]:
    """The state a checkpoint file last committed, read on an event loop of its own (the caller may run one)."""

    async def read() -> dict[str, Any]:
        async with checkpointer(path) as saver:
            graph = build_recurrence_graph().compile(checkpointer=saver)
            return dict((await graph.aget_state({"configurable": {"thread_id": thread_id}})).values)

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result()


def recall_at_end(
    scenario: Scenario,
    memory: Remembrance,
    agent: str,
    query: str,
    k: int,
    pending: Sequence[MemoryEvent] = (),
) -> tuple[Moment, list[RecalledMemory]]:
    """What `agent` (checked against the scenario's agents) recalls for `query` as of its last memory, `pending`
    events (not filed yet) included: its own records and public ones, never another agent's. Read-only: nothing
    is marked accessed."""
    if agent not in scenario.agent_names:
        word = scenario.world.labels.agent
        raise AmphoreusError(
            f"--agent {agent!a}: not {_article(word)} {word} of {scenario.name}; "
            f"expected one of [{shown(scenario.agent_names)}]"
        )
    records = memory.records(agent)
    latest = max(records, key=lambda r: (r.cycle, r.last_accessed), default=None)
    now = (
        Moment(cycle=latest.cycle, round=latest.round, tick=latest.last_accessed)
        if latest
        else Moment(cycle=1, round=0, tick=0)
    )
    if pending and (last := max(pending, key=lambda e: e.tick)).tick > now.tick:
        now = Moment(cycle=last.cycle, round=last.round, tick=last.tick)
    return now, memory.recall({agent: query}, k, now, pending)[agent]


def _article(word: str) -> str:
    """'a' or 'an' before a world's word for its agents (by its first letter: good enough for labels)."""
    return "an" if word[:1].lower() in "aeiou" else "a"
