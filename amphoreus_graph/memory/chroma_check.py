"""An embedded Chroma store checked before Chroma opens it, so that damage is one line naming the file, never a
traceback from Chroma's Rust or a segmentation fault inside hnswlib.

Checked, read-only: `chroma.sqlite3` with SQLite's `quick_check` (every page and record of every b-tree; the
cheaper half of `integrity_check`, which would also compare each index with its table); that each HNSW segment
the database names and says it wrote has its directory and files; and each segment's files as hnsw_files.py
says. A store with no database yet is new: nothing to check. A damaged index the store's write log can rebuild
exactly is dropped for Chroma to rebuild (log_rebuild.py), and said. A store whose files have not changed since
it passed in this process (a run's pre-open check, then its open) is not read again.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.hnsw_files import SegmentDamaged, check_segment
from amphoreus_graph.memory.log_rebuild import DATABASE, connect, drop_index, unlogged_records

_PERSISTED = "urn:chroma:segment/vector/hnsw-local-persisted"
_SEGMENT_ID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SEGMENTS = """
    SELECT s.id, c.dimension, c.schema_str, c.config_json_str, m.seq_id
    FROM segments s JOIN collections c ON s.collection = c.id LEFT JOIN max_seq_id m ON m.segment_id = s.id
    WHERE s.scope = 'VECTOR' AND s.type = ?
"""
WAYS_OUT = (
    "restore it from a backup, or rebuild it from its run's history: amphoreus simulate --resume RUN --fresh-memory"
)


class StoreDamaged(AmphoreusError):
    """A file of an embedded Chroma store that Chroma cannot be trusted to open: one line naming it, what is
    wrong, and the ways out."""

    def __init__(self, directory: Path, path: Path, problem: str) -> None:
        super().__init__(f"{path}: {problem}; the memory store {directory} is damaged ({WAYS_OUT})")
        self.directory = directory
        self.path = path
        self.problem = problem


@dataclass(frozen=True)
class _Segment:
    id: str
    dimension: int | None
    cosine: bool
    has_writes: bool


_FileState = tuple[str, int, int, int, int]
_passed: dict[Path, tuple[_FileState, ...]] = {}  # each store's files as they were when it last passed


def check_store(directory: Path) -> list[str]:
    """Raise StoreDamaged for the first problem found in the store in `directory` (hold its lock: a store
    being written changes under the check). A damaged vector index whose collection the write log holds whole is
    dropped, for Chroma to rebuild from the log (log_rebuild.py): one line per index saying so is returned.
    Skipped when no file of the store changed since it last passed here (a change moves a file's ctime, which no
    one can set back)."""
    key = directory.resolve()
    if key in _passed and _passed[key] == _files(key):
        return []
    _passed.pop(key, None)
    rebuilt = _check(directory)
    _passed[key] = _files(key)
    return rebuilt


def _files(directory: Path) -> tuple[_FileState, ...]:
    """Every file under `directory`: its path, inode, size, and modification and change times (ns)."""
    found = []
    for root, _, names in os.walk(directory):
        for name in names:
            path = os.path.join(root, name)
            try:
                st = os.stat(path)
            except OSError:
                continue  # gone while listed: its absence is the state
            found.append((path, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return tuple(sorted(found))


def _check(directory: Path) -> list[str]:
    rebuilt = []
    for segment in _segments(directory):
        try:
            check_segment(
                directory / segment.id,
                dimension=segment.dimension,
                cosine=segment.cosine,
                has_writes=segment.has_writes,
            )
        except SegmentDamaged as exc:
            rebuilt.append(_rebuild(directory, exc.path, exc.problem, segment.id))
        except OSError as exc:
            where = Path(exc.filename) if exc.filename else directory / segment.id
            rebuilt.append(_rebuild(directory, where, f"cannot read it ({exc.strerror or exc})", segment.id))
    return rebuilt


def _rebuild(directory: Path, path: Path, problem: str, segment_id: str) -> str:
    try:
        unlogged = unlogged_records(directory, segment_id)
    except sqlite3.Error as exc:
        raise StoreDamaged(directory, path, f"{problem}, and its write log cannot be read ({exc})") from None
    if unlogged:
        raise StoreDamaged(
            directory, path, f"{problem}; the store's write log lacks {unlogged} of its records' vectors to rebuild it"
        )
    drop_index(directory, segment_id)
    return (
        f"{path}: {problem} (a write cut short); the collection's vector index is rebuilt from the store's write "
        "log, which holds every record's vector"
    )


def collection_names(directory: Path) -> list[str]:
    """The names of the store's collections, read from its database without Chroma; StoreDamaged when the
    database cannot say (what it holds is then unknown)."""
    with _database(directory) as db:
        return [name for (name,) in _query(directory, db, "SELECT name FROM collections")]


def _segments(directory: Path) -> list[_Segment]:
    """The store's persisted HNSW segments, once its database passed SQLite's own check ([] for a new store)."""
    if not (directory / DATABASE).exists():
        indexes = [folder for folder in directory.iterdir() if _SEGMENT_ID.fullmatch(folder.name) and folder.is_dir()]
        if indexes:  # Chroma would make a new, empty database beside them: a store with nothing in it
            raise StoreDamaged(directory, directory / DATABASE, f"missing, beside {len(indexes)} index directories")
        return []
    with _database(directory) as db:
        (verdict,) = _query(directory, db, "PRAGMA quick_check(1)")[0]
        if verdict != "ok":
            found = " ".join(line for line in str(verdict).splitlines() if not line.startswith("***"))
            raise StoreDamaged(directory, directory / DATABASE, f"SQLite finds it damaged ({found})")
        try:
            rows = db.execute(_SEGMENTS, (_PERSISTED,)).fetchall()
        except sqlite3.OperationalError:  # tables Chroma has not made yet (it does on open), or another version's
            return []
    segments = []
    for segment_id, dimension, schema, config, seq_id in rows:
        if not isinstance(segment_id, str) or not _SEGMENT_ID.fullmatch(segment_id):
            raise StoreDamaged(directory, directory / DATABASE, f"a segment id {segment_id!r}, expected a UUID")
        known = dimension if isinstance(dimension, int) and dimension > 0 else None
        segments.append(_Segment(segment_id, known, _space(schema, config) == "cosine", bool(seq_id)))
    return segments


class _database:
    """The store's database opened read-only (nothing created; nothing written but the rollback of a transaction a
    killed writer left open, which any writer's open would do first), closed on exit."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory

    def __enter__(self) -> sqlite3.Connection:
        path = self.directory / DATABASE
        try:
            self.db = connect(self.directory, "ro")
            if _cut_mid_write(self.db):
                self.db.close()
                with closing(connect(self.directory, "rw")) as writer:
                    writer.execute(_PROBE).fetchall()  # SQLite rolls the cut transaction back
                self.db = connect(self.directory, "ro")
        except sqlite3.Error as exc:
            raise StoreDamaged(self.directory, path, f"cannot open it ({exc})") from None
        return self.db

    def __exit__(self, *_: object) -> None:
        self.db.close()


_PROBE = "SELECT count(*) FROM sqlite_master"


def _cut_mid_write(db: sqlite3.Connection) -> bool:
    """Whether a writer was killed mid-transaction (`kill -9` of a run): its hot journal must be rolled back before
    the database is read, which a read-only connection may not do (SQLITE_READONLY_ROLLBACK). Not damage."""
    try:
        db.execute(_PROBE).fetchall()
    except sqlite3.DatabaseError as exc:  # anything else is for the checks to name
        return getattr(exc, "sqlite_errorcode", None) == sqlite3.SQLITE_READONLY_ROLLBACK
    return False


def _query(directory: Path, db: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    try:
        return db.execute(sql, params).fetchall()
    except sqlite3.DatabaseError as exc:  # not a database, a damaged page, a table without its columns
        raise StoreDamaged(directory, directory / DATABASE, f"not a readable Chroma database ({exc})") from None


def _space(schema: object, config: object) -> str | None:
    """The distance a collection's vectors are stored for (Chroma 1.x keeps it in the collection's schema, older
    stores in its configuration); None where neither says."""
    for text, path in (
        (schema, ("keys", "#embedding", "float_list", "vector_index", "config", "space")),
        (config, ("hnsw", "space")),
    ):
        try:
            node: Any = json.loads(text) if isinstance(text, str) else None
        except ValueError:
            continue
        for key in path:
            node = node.get(key) if isinstance(node, dict) else None
        if isinstance(node, str):
            return node
    return None
