"""The rows a run's checkpoint file holds, built so that RunCheckpointer can insert many of them in one statement.

A task's writes are LangGraph's SQLite saver's rows (same table, values and conflict rules). A checkpoint is stored
as LangGraph's Postgres saver stores one: its row holds the channels' versions, not their values, and each value
goes once into `checkpoint_blobs`, keyed by its channel and version. A step stores only the channels it changed, so
a round's checkpoints hold what the round changed, not the whole society once for every step (docs/speed.md)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    get_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

Row = tuple[Any, ...]
MAX_VARIABLES = 999  # the fewest bound parameters a statement may hold in any SQLite build


@dataclass(frozen=True)
class Insert:
    """An INSERT into one table with one conflict rule, for any number of rows."""

    head: str  # up to VALUES
    width: int  # columns a row fills
    table: str = ""  # the table, for its rows' digests (ROW_DIGESTS)
    conflict: str = ""  # its conflict rule, which the digests follow

    def statements(self, rows: Sequence[Row]) -> Iterator[tuple[str, list[Any]]]:
        """The rows in as few multi-row statements as SQLite's parameter limit allows, in order (a later row of a
        statement meets the conflict rule against an earlier one as it would one statement later)."""
        per_statement = max(1, MAX_VARIABLES // self.width)
        for start in range(0, len(rows), per_statement):
            chunk = rows[start : start + per_statement]
            values = ", ".join([f"({', '.join('?' * self.width)})"] * len(chunk))
            yield f"{self.head} VALUES {values}", [value for row in chunk for value in row]


LAYOUT = 2  # PRAGMA user_version of a file in this layout (0: LangGraph's own, every value in every checkpoint)
BLOBS = """CREATE TABLE IF NOT EXISTS checkpoint_blobs (
    thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL DEFAULT '', channel TEXT NOT NULL, version TEXT NOT NULL,
    type TEXT NOT NULL, blob BLOB,
    PRIMARY KEY (thread_id, checkpoint_ns, channel, version)
)"""
EMPTY = "empty"  # the type of a channel's version that holds no value (a channel cleared by its step)
_BLOB_COLUMNS = "thread_id, checkpoint_ns, channel, version, type, blob"
_CHECKPOINT_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, type, checkpoint, metadata"
_WRITE_COLUMNS = "thread_id, checkpoint_ns, checkpoint_id, task_id, task_path, idx, channel, type, value"
CHECKPOINT_INSERT = Insert(f"INSERT OR REPLACE INTO checkpoints ({_CHECKPOINT_COLUMNS})", 7, "checkpoints", "REPLACE")
BLOB_INSERT = Insert(f"INSERT OR IGNORE INTO checkpoint_blobs ({_BLOB_COLUMNS})", 6, "checkpoint_blobs", "IGNORE")
_REPLACE_WRITES = Insert(f"INSERT OR REPLACE INTO writes ({_WRITE_COLUMNS})", 9, "writes", "REPLACE")
_KEEP_FIRST_WRITES = Insert(f"INSERT OR IGNORE INTO writes ({_WRITE_COLUMNS})", 9, "writes", "IGNORE")

# Beside LangGraph's rows, a digest of each (written in the same transaction, by the same conflict rule), so a
# resume can tell a checkpoint whose bytes changed on disk from the one written: SQLite's own checks see only its
# pages' structure, and a flipped byte inside a serialized state is other valid state.
ROW_DIGESTS = """CREATE TABLE IF NOT EXISTS row_digests (
    tbl TEXT NOT NULL, thread_id TEXT NOT NULL, checkpoint_ns TEXT NOT NULL, checkpoint_id TEXT NOT NULL,
    task_id TEXT NOT NULL, idx INTEGER NOT NULL, digest TEXT NOT NULL,
    PRIMARY KEY (tbl, thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
) WITHOUT ROWID"""  # small rows kept in their key's own b-tree: no second copy of every key in an index
_DIGEST_COLUMNS = "tbl, thread_id, checkpoint_ns, checkpoint_id, task_id, idx, digest"
SELECT_ROWS = {
    "checkpoints": f"SELECT {_CHECKPOINT_COLUMNS} FROM checkpoints",
    "writes": f"SELECT {_WRITE_COLUMNS} FROM writes",
    "checkpoint_blobs": f"SELECT {_BLOB_COLUMNS} FROM checkpoint_blobs",
}
SELECT_DIGESTS = f"SELECT {_DIGEST_COLUMNS} FROM row_digests"


def digest_insert(insert: Insert) -> Insert:
    """Where the digests of `insert`'s rows go, by its conflict rule."""
    return Insert(f"INSERT OR {insert.conflict} INTO row_digests ({_DIGEST_COLUMNS})", 7)


def row_key(table: str, row: Row) -> Row:
    """A row's key in row_digests: its table and primary key (a checkpoint has no task and no index; a blob's
    channel and version stand in the checkpoint's and the task's columns)."""
    if table == "writes":
        return (table, *row[:3], row[3], row[5])
    return (table, *row[:4], -1) if table == "checkpoint_blobs" else (table, *row[:3], "", -1)


def row_digest(row: Row) -> str:
    """A digest of every column of a row as SQLite gives it back (text, bytes, integers, NULL): each column's type
    and length, then its bytes (a blob as it is: a state can be megabytes, not worth escaping first)."""
    digest = hashlib.sha256()
    for value in row:
        data = value if isinstance(value, bytes) else repr(value).encode()
        digest.update(f"{type(value).__name__}:{len(data)}:".encode())
        digest.update(data)
    return digest.hexdigest()[:32]


def digest_rows(insert: Insert, rows: Sequence[Row]) -> list[Row]:
    return [(*row_key(insert.table, row), row_digest(row)) for row in rows]


def checkpoint_row(
    config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata, serde: SerializerProtocol
) -> Row:
    """The checkpoint's row: its channels' versions without their values (`blob_rows` holds those)."""
    configurable = config["configurable"]
    type_, serialized = serde.dumps_typed({**checkpoint, "channel_values": {}})
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


def blob_rows(
    config: RunnableConfig, checkpoint: Checkpoint, versions: ChannelVersions, serde: SerializerProtocol
) -> list[Row]:
    """The values of the channels a checkpoint gave new versions, one row each (a version with no value: EMPTY)."""
    configurable = config["configurable"]
    where = (str(configurable["thread_id"]), str(configurable["checkpoint_ns"]))
    values = checkpoint["channel_values"]
    return [
        (*where, channel, str(version), *(serde.dumps_typed(values[channel]) if channel in values else (EMPTY, None)))
        for channel, version in versions.items()
    ]


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


def writes_insert(writes: Sequence[tuple[str, Any]]) -> Insert:
    """Special channels (errors, interrupts…) replace an earlier write at their index; others keep the first."""
    return _REPLACE_WRITES if all(channel in WRITES_IDX_MAP for channel, _ in writes) else _KEEP_FIRST_WRITES


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
