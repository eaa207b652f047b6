"""Reading a run's checkpoints back from the by-version layout (checkpoint_rows.py): a checkpoint's row names its
channels' versions, and each value is read from `checkpoint_blobs` by channel and version, so what LangGraph gets
back is the checkpoint it handed over, every value in it."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any, cast

from langgraph.checkpoint.base import ChannelVersions, Checkpoint, CheckpointMetadata, CheckpointTuple
from langgraph.checkpoint.serde.base import SerializerProtocol
from langgraph.checkpoint.sqlite.utils import load_pending_writes

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.society.checkpoint_rows import EMPTY, MAX_VARIABLES, Row

CHECKPOINTS = (
    "SELECT thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata FROM checkpoints"
)
WRITES = (
    "SELECT task_id, channel, type, value, task_path, idx FROM writes "
    "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
)


def blob_queries(thread_id: str, namespace: str, versions: ChannelVersions) -> Iterator[tuple[str, list[Any]]]:
    """The statements that read the values of `versions` (a channel and its version a pair), as few as SQLite's
    parameter limit allows."""
    pairs = [(channel, str(version)) for channel, version in versions.items()]
    per_statement = (MAX_VARIABLES - 2) // 2
    for start in range(0, len(pairs), per_statement):
        chunk = pairs[start : start + per_statement]
        wanted = ", ".join(["(?, ?)"] * len(chunk))
        sql = (
            "SELECT channel, type, blob FROM checkpoint_blobs WHERE thread_id = ? AND checkpoint_ns = ? "
            f"AND (channel, version) IN (VALUES {wanted})"
        )
        yield sql, [thread_id, namespace, *(value for pair in chunk for value in pair)]


def stored_checkpoint(row: Row, serde: SerializerProtocol) -> Checkpoint:
    """The checkpoint a row (CHECKPOINTS) holds, without its values."""
    return cast(Checkpoint, serde.loads_typed((row[4], row[5])))


def checkpoint_tuple(
    row: Row, checkpoint: Checkpoint, blobs: Sequence[Row], writes: Sequence[Row], serde: SerializerProtocol
) -> CheckpointTuple:
    """A checkpoint as LangGraph reads it, from its row (CHECKPOINTS), the checkpoint stored there, its values'
    rows (`blob_queries`) and its pending writes (WRITES). A value that is not there is one line: the file was
    changed, or written in another layout."""
    thread_id, namespace, checkpoint_id, parent_id, _, _, metadata = row
    missing = set(checkpoint["channel_versions"]) - {channel for channel, _, _ in blobs}
    if missing:
        raise AmphoreusError(
            f"checkpoint {checkpoint_id}: no stored value for {', '.join(sorted(missing))} at the version it names; "
            "expected a checkpoint file written by this version of amphoreus-graph, unchanged since"
        )
    stored = {channel: (kind, blob) for channel, kind, blob in blobs if kind != EMPTY}
    checkpoint["channel_values"] = {  # in the checkpoint's order of channels, as it was handed over
        channel: serde.loads_typed(stored[channel]) for channel in checkpoint["channel_versions"] if channel in stored
    }
    where = {"thread_id": thread_id, "checkpoint_ns": namespace}
    found = CheckpointTuple(
        {"configurable": where | {"checkpoint_id": checkpoint_id}},
        checkpoint,
        cast(CheckpointMetadata, json.loads(metadata) if metadata is not None else {}),
        {"configurable": where | {"checkpoint_id": parent_id}} if parent_id else None,
        load_pending_writes(writes, serde),
    )
    return found
