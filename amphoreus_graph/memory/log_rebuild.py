"""A collection's vector index that a kill cut mid-write, rebuilt exactly from the store's write log.

Chroma writes a collection's HNSW files and then its id map (`index_metadata.pickle`) in place, every few writes,
so `kill -9` during that write can leave them cut. Every write reaches the store's write log first
(`embeddings_queue`, in SQLite, transactional), and Chroma applies to an index the log past what the index last
persisted. By default Chroma then purges the log an index has persisted; the embedded stores this package opens keep
it whole (`keep_whole_log`: each vector is kept twice, ~1.6 KB a row at 384 dimensions), so a damaged index can be
dropped and Chroma replays the whole log into a new one, the same writes in the same order. That is done only where
the log is seen to hold a write with a vector for every live record (so its last one); a store whose log was purged
too far (made before, or vacuumed by `chroma utils vacuum`) cannot be rebuilt that way and stays refused as damaged.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from contextlib import closing
from pathlib import Path
from urllib.parse import quote

from amphoreus_graph.errors import AmphoreusError

DATABASE = "chroma.sqlite3"
_WHOLE_LOG = json.dumps({"automatically_purge": False, "_type": "EmbeddingsQueueConfigurationInternal"})
# Chroma purges a collection's log up to a position: what is left is a suffix of its writes, so a record's last
# write with a vector is in it whenever any is, and replaying it gives the record its vector (writes without one,
# metadata updates, leave the index as it was).
_LIVE_WITHOUT_LOGGED_VECTOR = """
    SELECT count(*) FROM segments v
    JOIN segments m ON m.collection = v.collection AND m.scope = 'METADATA'
    JOIN embeddings e ON e.segment_id = m.id
    WHERE v.id = :segment AND e.embedding_id NOT IN (
        SELECT q.id FROM embeddings_queue q, segments s
        WHERE s.id = :segment AND substr(q.topic, -length(s.collection)) = s.collection AND q.vector IS NOT NULL
    )
"""
_TIMEOUT_S = 30.0  # SQLite's wait for a lock another connection holds, before it gives up


def connect(directory: Path, mode: str, *, timeout: float = 5.0) -> sqlite3.Connection:
    """The store's database, opened `ro` (nothing created) or `rw`; `timeout`: SQLite's wait for a lock."""
    path = directory / DATABASE
    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode={mode}", uri=True, timeout=timeout)


def keep_whole_log(directory: Path) -> None:
    """Have Chroma keep the store's write log whole from now on (its `automatically_purge` setting off); call once
    Chroma has opened the store (it makes the table)."""
    try:
        with closing(connect(directory, "rw", timeout=_TIMEOUT_S)) as db, db:
            if db.execute("UPDATE embeddings_queue_config SET config_json_str = ?", (_WHOLE_LOG,)).rowcount == 0:
                db.execute("INSERT INTO embeddings_queue_config (id, config_json_str) VALUES (1, ?)", (_WHOLE_LOG,))
    except sqlite3.Error as exc:
        raise AmphoreusError(
            f"{directory / DATABASE}: cannot keep the store's write log ({exc}); expected a writable Chroma store"
        ) from None


def unlogged_records(directory: Path, segment_id: str) -> int:
    """How many live records of the vector segment's collection the write log does not hold the current vector
    of (0: the log rebuilds the segment exactly)."""
    with closing(connect(directory, "ro", timeout=_TIMEOUT_S)) as db:
        (count,) = db.execute(_LIVE_WITHOUT_LOGGED_VECTOR, {"segment": segment_id}).fetchone()
    return int(count)


def drop_index(directory: Path, segment_id: str) -> None:
    """Forget the segment's persisted index (its files and its log position), so that Chroma builds it anew from
    the whole log when it next opens the collection. Killed halfway, the next check finds it damaged again."""
    with closing(connect(directory, "rw", timeout=_TIMEOUT_S)) as db, db:
        db.execute("DELETE FROM max_seq_id WHERE segment_id = ?", (segment_id,))
    shutil.rmtree(directory / segment_id, ignore_errors=True)
