"""Shards as the checkpoint committed them: checked when a run resumes, repaired exactly, or refused in one line.

The checkpoint holds, per shard, the byte offset its last recorded round ended at and a digest of the lines
before it (society/ledger.py). On resume every shard is read against them:

- bytes past the offset were never committed (a crash between writing and checkpointing): they are cut off;
- a shard shorter than its offset, whose committed lines do not parse as its rows, or whose lines are not the
  ones the digest says (a line edited into other valid JSON) is damaged: it is rebuilt from the checkpoint's
  history (each round's `record` step starts from a checkpointed state, and the rows it writes are a pure
  function of that state), and the rebuilt bytes must end exactly at the committed offset, with its digest;
- a damage that cannot be rebuilt that way is one `AmphoreusError` naming the file and the offset.

A shard is never padded or extended with anything but the rows it committed.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from langchain_core.runnables import RunnableConfig
from langgraph.types import StateSnapshot
from pydantic import BaseModel

from amphoreus_graph.atomic import write_atomic_bytes
from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import SHARD_GLOB, RunDir
from amphoreus_graph.society.chronicle import ChronicleWriter, RoundRecord
from amphoreus_graph.society.graph import round_chronicle, round_samples
from amphoreus_graph.society.ledger import fold
from amphoreus_graph.society.perception import TurnMemo
from amphoreus_graph.society.samples import Sample, ShardWriter
from amphoreus_graph.society.state import SocietyState


class History(Protocol):
    """What the repair needs of a compiled graph: its checkpoints, newest first."""

    def aget_state_history(self, config: RunnableConfig) -> AsyncIterator[StateSnapshot]: ...


@dataclass(frozen=True)
class Damage:
    """A committed shard that does not hold what its checkpoint says: where, and what is wrong."""

    key: str
    path: Path
    committed: int
    at: int
    problem: str

    def line(self) -> str:
        return f"{self.path}: {self.problem} at byte {self.at} (the checkpoint committed {self.committed} bytes)"


def shard_file(run_dir: Path, key: str) -> Path:
    """The file an offset key names: `chronicle/cycle-….jsonl` under the run, a bare name under samples/."""
    return run_dir / key if "/" in key else RunDir(run_dir).samples / key


def find_damage(run_dir: Path, offsets: Mapping[str, int], digests: Mapping[str, str]) -> list[Damage]:
    """Every committed shard that is shorter than its offset, holds a committed line that does not parse, or
    whose committed lines are not the ones the checkpoint's digest says (a checkpoint from before digests has
    none: its lines are only parsed)."""
    found = []
    for key, committed in sorted(offsets.items()):
        path = shard_file(run_dir, key)
        row = RoundRecord if key.startswith(f"{RunDir.CHRONICLE}/") else Sample
        problem = _check(path, committed, row, digests.get(key))
        if problem is not None:
            at, what = problem
            found.append(Damage(key, path, committed, at, what))
    return found


def _check(path: Path, committed: int, row: type[BaseModel], digest: str | None) -> tuple[int, str] | None:
    """(byte offset, what is wrong) for the first problem in the committed part of a shard, else None. A row
    must be one of the shard's rows, not just JSON: damage can leave valid JSON that has lost a field."""
    try:
        with open(path, "rb") as handle:
            data = handle.read(committed)
    except FileNotFoundError:
        return 0, "the shard is missing"
    except OSError as exc:
        raise AmphoreusError(f"{path}: cannot read it ({exc.strerror or exc}); expected a readable shard") from None
    if len(data) < committed:
        return len(data), "the shard is shorter than its checkpoint"
    start = 0
    for line in data.splitlines(keepends=True):
        if not line.endswith(b"\n"):
            return start, "the last committed line is cut short"
        try:
            row.model_validate_json(line)
        except ValueError:
            return start, "a committed line does not parse"
        start += len(line)
    if digest is not None and fold("", data) != digest:
        return 0, "a committed line was changed (its lines are not those the checkpoint's digest says)"
    return None


def cut_uncommitted(run_dir: Path, offsets: Mapping[str, int]) -> None:
    """Drop bytes no checkpoint committed: tails past an offset, and cycle shards with no offset at all."""
    for folder in (RunDir.SAMPLES, RunDir.CHRONICLE):
        for path in sorted((run_dir / folder).glob(SHARD_GLOB)):
            key = path.name if folder == RunDir.SAMPLES else f"{folder}/{path.name}"
            committed = offsets.get(key, 0)
            if path.stat().st_size > committed:
                with open(path, "r+b") as handle:
                    handle.truncate(committed)
                    os.fsync(handle.fileno())


async def committed_rows(
    graph: History, thread: RunnableConfig, keys: set[str], scenario: Scenario
) -> dict[str, bytes]:
    """Each key's committed bytes, rebuilt from the checkpoints `record` started from, oldest first.

    Only the ancestors of the current checkpoint count (an abandoned branch committed nothing), and only rounds
    whose `record` step was itself checkpointed (the last one may not have been)."""
    snapshots: dict[str, StateSnapshot] = {}
    head: StateSnapshot | None = None
    async for snapshot in graph.aget_state_history(thread):
        head = head or snapshot
        snapshots[_checkpoint_id(snapshot.config)] = snapshot
    chain: list[StateSnapshot] = []
    node = head
    while node is not None:
        chain.append(node)
        node = snapshots.get(_checkpoint_id(node.parent_config)) if node.parent_config else None
    rebuilt: dict[str, bytearray] = {key: bytearray() for key in keys}
    committed = _offsets(head.values if head else {})
    for snapshot in reversed(chain):
        if snapshot.next != ("record",) or snapshot is head:
            continue
        state: SocietyState = snapshot.values  # type: ignore[assignment]
        starts = _offsets(state)
        samples = round_samples(state, scenario, TurnMemo())
        payloads = ShardWriter.payloads(samples) | ChronicleWriter.payloads(round_chronicle(state, scenario))
        for key, payload in payloads.items():
            if key in rebuilt and starts.get(key, 0) < committed.get(key, 0):
                rebuilt[key][starts.get(key, 0) :] = payload
    return {key: bytes(data) for key, data in rebuilt.items()}


def _located(damage: Damage, rebuilt: bytes) -> Damage:
    """A changed line's damage, placed at the first byte where the shard differs from what it committed."""
    if damage.at or not damage.problem.startswith("a committed line was changed"):
        return damage
    with open(damage.path, "rb") as handle:
        held = handle.read(damage.committed)
    at = next((i for i, (a, b) in enumerate(zip(held, rebuilt, strict=False)) if a != b), len(held))
    return Damage(damage.key, damage.path, damage.committed, at, damage.problem)


def _checkpoint_id(config: RunnableConfig | None) -> str:
    return str((config or {}).get("configurable", {}).get("checkpoint_id", ""))


def _offsets(values: Mapping[str, Any]) -> dict[str, int]:
    return dict(values.get("sample_offsets") or {})


async def verify_shards(
    graph: History, thread: RunnableConfig, run_dir: Path, values: Mapping[str, Any], scenario: Scenario
) -> list[str]:
    """Make every shard hold exactly what the checkpoint (its `values`) committed; returns one line per shard
    repaired.

    Raises AmphoreusError (one line: file, byte offset, what is wrong) for a damage the history cannot rebuild."""
    offsets = _offsets(values)
    digests: Mapping[str, str] = values.get("shard_digests") or {}
    cut_uncommitted(run_dir, offsets)
    damaged = find_damage(run_dir, offsets, digests)
    if not damaged:
        return []
    rebuilt = await committed_rows(graph, thread, {d.key for d in damaged}, scenario)
    repaired = []
    for damage in damaged:
        data = rebuilt[damage.key]
        exact = len(data) == damage.committed and fold("", data) == digests.get(damage.key, fold("", data))
        if not exact:
            raise AmphoreusError(
                f"{damage.line()}; the checkpoint's history rebuilds other bytes ({len(data)}), so it cannot be "
                "repaired exactly; expected the shard restored from a copy"
            )
        damage = _located(damage, data)
        damage.path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic_bytes(damage.path, data)
        repaired.append(f"repaired {damage.line()}: rebuilt from the checkpoint's history")
    return repaired
