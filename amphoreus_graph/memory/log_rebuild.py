"""A collection's vector index that a kill cut mid-write, rebuilt exactly from the store's write log.

Chroma writes a collection's HNSW files and then its id map (`index_metadata.pickle`) in place, every few writes,
so `kill -9` during that write can leave them cut. Every write reaches the store's write log first
(`embeddings_queue`, in SQLite, transactional), and Chroma applies to an index the log past what the index last
persisted. By default Chroma then purges the log an index has persisted; the embedded stores this package opens keep
it whole (`keep_whole_log`: each vector is kept twice, ~1.6 KB a row at 384 dimensions), so a damaged index can be
dropped and Chroma replays the whole log into a new one, the same writes in the same order. That is done only where
the log is seen to hold a write with a vector for every live record (so its last one); a store whose log was purged
too far (made before, or vacuumed by `chroma utils vacuum`) cannot be rebuilt that way and stays refused as damaged.

Kept whole, the log would grow with every write a store ever had; `compact_log` keeps what a rebuild needs: the
last write with a vector of each live record, every write of a record an index has not persisted past, and nothing
of a record deleted for good.
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
# Chroma's operation codes in the log (chromadb.proto: ADD, UPDATE, UPSERT, DELETE)
_ADD, _UPSERT = 0, 2
_TOPIC_SEGMENTS = """
    SELECT s.collection, s.id, s.scope, coalesce(m.seq_id, 0) FROM segments s
    LEFT JOIN max_seq_id m ON m.segment_id = s.id
"""
# a record is settled when every write of it is at or below what all its collection's segments have applied
_SETTLED = """
    CREATE TEMP TABLE settled AS
    SELECT id, max(CASE WHEN vector IS NOT NULL THEN seq_id END) AS kept
    FROM embeddings_queue WHERE topic = :topic GROUP BY id HAVING max(seq_id) <= :applied
"""
_LIVE = "SELECT embedding_id FROM embeddings WHERE segment_id = :metadata"
# a live record whose last vector came by an UPDATE (which replays onto nothing) is left as it is
_UNSURE = f"""
    DELETE FROM settled WHERE id IN ({_LIVE}) AND (kept IS NULL OR
        (SELECT operation FROM embeddings_queue WHERE seq_id = settled.kept) NOT IN ({_ADD}, {_UPSERT}))
"""
# the log's last write stays whatever it is: a new write's position is one past the last one there, and one at or
# below what a segment has applied would never be applied
_SUPERSEDED = f"""
    DELETE FROM embeddings_queue WHERE topic = :topic AND seq_id < :last AND id IN (SELECT id FROM settled) AND (
        id NOT IN ({_LIVE}) OR seq_id <> (SELECT kept FROM settled WHERE settled.id = embeddings_queue.id))
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


def compact_log(directory: Path) -> int:
    """Remove from the store's write log what no rebuild needs, in one transaction (a kill leaves it as it was);
    returns the writes removed. A record is touched only once every write of it is at or below what each of its
    collection's segments has applied (Chroma replays past that on open): if it is live, all but its last write with
    a vector go (replayed alone, that write gives the index the record as it is; metadata lives in its own table);
    if it is gone, all of it; the log's last write always stays (Chroma numbers a new write one past it). The
    database's freed pages are reused by later writes (its file does not shrink)."""
    try:
        with closing(connect(directory, "rw", timeout=_TIMEOUT_S)) as db, db:
            return _compact(db)
    except sqlite3.Error as exc:
        raise AmphoreusError(
            f"{directory / DATABASE}: cannot compact the store's write log ({exc}); expected a writable Chroma store"
        ) from None


def _compact(db: sqlite3.Connection) -> int:
    applied: dict[str, int] = {}
    metadata: dict[str, str] = {}
    for collection, segment, scope, position in db.execute(_TOPIC_SEGMENTS):
        seq_id = position if isinstance(position, int) else 0  # an older Chroma's position (bytes): touch nothing
        applied[collection] = min(applied.get(collection, seq_id), seq_id)
        if scope == "METADATA":
            metadata[collection] = segment
    removed = 0
    (last,) = db.execute("SELECT max(seq_id) FROM embeddings_queue").fetchone()
    for (topic,) in db.execute("SELECT DISTINCT topic FROM embeddings_queue").fetchall():
        collection = topic.rsplit("/", 1)[-1]
        if collection not in metadata or not applied.get(collection):
            continue  # a collection gone, or one whose index has persisted nothing yet
        where = {"topic": topic, "applied": applied[collection], "metadata": metadata[collection], "last": last}
        db.execute("DROP TABLE IF EXISTS temp.settled")
        db.execute(_SETTLED, where)
        db.execute("CREATE UNIQUE INDEX temp.settled_id ON settled (id)")
        db.execute(_UNSURE, where)
        removed += db.execute(_SUPERSEDED, where).rowcount
    db.execute("DROP TABLE IF EXISTS temp.settled")
    return removed


def logged_writes(directory: Path) -> int:
    """How many writes the store's write log holds."""
    with closing(connect(directory, "ro", timeout=_TIMEOUT_S)) as db:
        (count,) = db.execute("SELECT count(*) FROM embeddings_queue").fetchone()
    return int(count)


def vacuum(directory: Path) -> None:
    """Rewrite the store's database without its free pages (what compaction freed), under the caller's lock with
    no client open. SQLite's VACUUM is one transaction: stopped anywhere, the database is as it was; it needs room
    for a copy of the database."""
    with closing(connect(directory, "rw", timeout=_TIMEOUT_S)) as db:
        db.execute("VACUUM")


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
