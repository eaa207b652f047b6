"""The rows LangGraph's SQLite saver stores for a checkpoint and for a task's writes, built as it builds them (same
statements, same values), so that RunCheckpointer can insert and commit each in one trip to the database thread."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import WRITES_IDX_MAP, Checkpoint, CheckpointMetadata, get_checkpoint_metadata
from langgraph.checkpoint.serde.base import SerializerProtocol

Row = tuple[Any, ...]
_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
CHECKPOINT_SQL = (
    "INSERT OR REPLACE INTO checkpoints (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, "
    "checkpoint, metadata) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def checkpoint_row(
    config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, serde: SerializerProtocol
) -> Row:
    configurable = config["configurable"]
    type_, serialized = serde.dumps_typed(checkpoint)
    serialized_metadata = json.dumps(get_checkpoint_metadata(config, metadata), ensure_ascii=False)
    return (
        str(configurable["thread_id"]),
        configurable["checkpoint_ns"],
        checkpoint["id"],
        configurable.get("checkpoint_id"),
        type_,
        serialized,
        serialized_metadata.encode("utf-8", "ignore"),
    )


def saved_config(config: RunnableConfig, checkpoint: Checkpoint) -> RunnableConfig:
    """What `aput` returns: the config naming the checkpoint just saved."""
    configurable = config["configurable"]
    return {
        "configurable": {
            "thread_id": configurable["thread_id"],
            "checkpoint_ns": configurable["checkpoint_ns"],
            "checkpoint_id": checkpoint["id"],
        }
    }


def writes_sql(writes: Sequence[tuple[str, Any]]) -> str:
    """Special channels (errors, interrupts…) replace an earlier write at their index; others keep the first."""
    verb = "REPLACE" if all(channel in WRITES_IDX_MAP for channel, _ in writes) else "IGNORE"
    return f"INSERT OR {verb} INTO writes ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"


def write_rows(
    config: RunnableConfig,
    writes: Sequence[tuple[str, Any]],
    task_id: str,
    task_path: str,
    serde: SerializerProtocol,
) -> list[Row]:
    configurable = config["configurable"]
    where = (str(configurable["thread_id"]), str(configurable["checkpoint_ns"]), str(configurable["checkpoint_id"]))
    return [
        (*where, task_id, task_path, WRITES_IDX_MAP.get(channel, idx), channel, *serde.dumps_typed(value))
        for idx, (channel, value) in enumerate(writes)
    ]
