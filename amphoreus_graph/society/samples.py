"""Training samples: one per agent turn, written to JSONL shards exactly once.

Each round's samples are appended at a byte offset that the graph checkpoints. A replayed round first
truncates its shard back to that offset, so a crash between writing and checkpointing never duplicates.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from amphoreus_graph.atomic import append_at
from amphoreus_graph.contracts.ids import sample_id
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import SHARD_GLOB, shard_name

Row = TypeVar("Row", bound=BaseModel)
# Set by `skipping_bad_rows`: who hears about a row that is skipped. Unset, a bad row stops the reader.
_SKIP_BAD_ROWS: ContextVar[Callable[[str], None] | None] = ContextVar("skip_bad_rows", default=None)


class Sample(BaseModel):
    """One agent turn as a chat example: the messages the model saw and the Decision it gave."""

    id: str
    run: str
    world: str = Field(default="", description="the world the turn was lived in (its scenario's world name)")
    cycle: int
    round: int
    agent: str
    path: str
    model: str
    messages: list[dict[str, str]] = Field(description="system, user, then the assistant's Decision as JSON")
    decision: Decision
    decided_by: str = Field(default="", description="who actually decided: the model, or its stand-in, saying so")
    error: str | None = Field(default=None, description="why the model did not decide (kind: message), if it did not")
    flags: list[str] = Field(default_factory=list)
    context: TurnContext | None = Field(
        default=None, description="the turn as the agent saw it, so experts can re-pose it to other policies"
    )

    @staticmethod
    def make_id(run: str, cycle: int, round_: int, agent: str, branch: str = "") -> str:
        """Unique per run, round and agent; a fork's own rounds (after its fork point, when it changed something)
        name its branch too, as they hold other turns under its parent's run name (contracts/ids.py)."""
        return sample_id(run, cycle, round_, agent, branch)


class ShardWriter:
    """Writes rounds of samples under `RUN/samples/`; idempotent given the checkpointed offsets."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    @staticmethod
    def payloads(samples: list[Sample]) -> dict[str, bytes]:
        """The bytes a round appends, by offset key (the shard's name): also what rebuilds a damaged shard."""
        by_shard: dict[str, list[Sample]] = {}
        for sample in samples:
            by_shard.setdefault(shard_name(sample.cycle), []).append(sample)
        return {
            shard: "".join(json_line(s.model_dump(mode="json")) for s in rows).encode()
            for shard, rows in by_shard.items()
        }

    def write_round(self, samples: list[Sample], offsets: dict[str, int]) -> dict[str, int]:
        """Append samples to their cycle shards starting at the committed offsets; return new offsets."""
        return self.append(self.payloads(samples), offsets)

    def append(self, payloads: dict[str, bytes], offsets: dict[str, int]) -> dict[str, int]:
        """Append each shard's payload at its committed offset; return the new offsets."""
        updated = dict(offsets)
        for shard, payload in payloads.items():
            updated[shard] = append_at(self.directory / shard, payload, updated.get(shard, 0))
        return updated


def json_line(row: dict[str, Any]) -> str:
    """One row as a JSON line, its keys in the order the row has them (a model's field order, a dict's producer's
    order): a turn's status lines are in its world's order, which its prompt showed, so a turn read back from its
    sample renders that prompt again. Deterministic, since every producer builds its dicts in a fixed order."""
    return json.dumps(row, ensure_ascii=False) + "\n"


@contextmanager
def skipping_bad_rows(report: Callable[[str], None]) -> Iterator[None]:
    """Within this block, readers skip a row that does not parse and `report` one line (file:line: what) for it,
    instead of stopping there (the commands' `--skip-bad-rows`)."""
    token = _SKIP_BAD_ROWS.set(report)
    try:
        yield
    finally:
        _SKIP_BAD_ROWS.reset(token)


def iter_rows(path: Path, model: type[Row]) -> Iterator[Row]:
    """Every row of one JSONL file, one line at a time. A line that does not parse is one AmphoreusError naming
    file:line, or (inside `skipping_bad_rows`) is reported in one line and skipped."""
    with open(path, "rb") as handle:
        for number, raw in enumerate(handle, 1):
            if not raw.strip():
                continue
            try:
                yield model.model_validate_json(raw)
            except ValidationError as exc:
                problem = _row_problem(exc)
                line = f"{path}:{number}: {problem}; expected one {model.__name__} as JSON per line"
                report = _SKIP_BAD_ROWS.get()
                if report is None:
                    raise AmphoreusError(f"{line} (--skip-bad-rows goes on without it)") from None
                report(f"{line}: skipped")


def _row_problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first["type"] in ("json_invalid", "json_type"):
        return f"not JSON ({first['msg']})"
    where = ".".join(str(part) for part in first["loc"]) or "(row)"
    return f"{where}: {first['msg']}"


def iter_shards(directory: Path, model: type[Row]) -> Iterator[Row]:
    """Every row of a directory's cycle shards, in shard order, one line at a time (flat memory)."""
    for shard in sorted(directory.glob(SHARD_GLOB)):
        yield from iter_rows(shard, model)


def count_rows(directory: Path) -> int:
    """Lines of a directory's cycle shards that parse as JSON objects (what a summary may claim was written)."""
    count = 0
    for shard in sorted(directory.glob(SHARD_GLOB)):
        with open(shard, "rb") as handle:
            for raw in handle:
                try:
                    count += isinstance(json.loads(raw), dict)
                except ValueError:
                    continue
    return count


def iter_samples(directory: Path) -> Iterator[Sample]:
    """Every sample under a run's samples directory, in shard order."""
    return iter_shards(directory, Sample)


def read_samples(directory: Path) -> list[Sample]:
    """Every sample under a run's samples directory, in shard order."""
    return list(iter_samples(directory))
