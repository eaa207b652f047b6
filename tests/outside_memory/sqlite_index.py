"""RecordIndex on SQLite: one file holds many societies' rows, access ticks and claims; exact cosine search.

Written against the public seam only (amphoreus_graph.memory.index and .backends), as a backend in another
repository would be. A connection per call: Remembrance reaches its index from worker threads.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

from amphoreus_graph.memory.backends import MemoryPlace
from amphoreus_graph.memory.index import RowChanges, Rows, nearest

SCHEMA = """
CREATE TABLE IF NOT EXISTS rows (society TEXT, owner TEXT, id TEXT, text TEXT, metadata TEXT, vector TEXT,
                                 PRIMARY KEY (society, owner, id));
CREATE TABLE IF NOT EXISTS ticks (society TEXT, key TEXT, tick INTEGER, PRIMARY KEY (society, key));
CREATE TABLE IF NOT EXISTS claims (society TEXT PRIMARY KEY, value TEXT);
"""


def open_sqlite(place: MemoryPlace) -> SqliteStore:
    """`sqlite:///FILE` (or `sqlite://` for RUN/memory.sqlite): the backend factory the entry point names."""
    if place.options:
        raise place.refuse("sqlite:///FILE, without options")
    return SqliteStore(Path(place.location) if place.location else place.run_dir / "memory.sqlite")


@dataclass(frozen=True)
class SqliteStore:
    path: Path

    def open_index(self, society: str, *, shared: bool = False) -> SqliteIndex:
        return SqliteIndex(self.path, society)


class SqliteIndex:
    def __init__(self, path: Path, society: str) -> None:
        self.path, self._society = path, society
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._db() as db:
            db.executescript(SCHEMA)

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=30)) as db, db:  # the inner `db`: one transaction
            yield db

    @property
    def society(self) -> str:
        return self._society

    @property
    def exclusive(self) -> bool:
        return False  # any process may open the file

    def write(self, changes: Sequence[RowChanges]) -> None:
        s = self._society
        with self._db() as db:
            for c in changes:
                db.executemany(
                    "DELETE FROM rows WHERE society=? AND owner=? AND id=?", [(s, c.owner, i) for i in c.deleted]
                )
                w = c.written
                db.executemany(
                    "INSERT OR REPLACE INTO rows VALUES (?, ?, ?, ?, ?, ?)",
                    [
                        (s, c.owner, i, t, json.dumps(m), json.dumps([float(x) for x in v]))
                        for i, t, m, v in zip(w.ids, w.texts, w.metadatas, w.vectors, strict=True)
                    ],
                )
                db.executemany(
                    "UPDATE rows SET metadata=? WHERE society=? AND owner=? AND id=?",
                    [(json.dumps(m), s, c.owner, i) for i, m in zip(c.updated.ids, c.updated.metadatas, strict=True)],
                )

    def _rows(self, owner: str) -> list[tuple[str, str, str, str]]:
        with self._db() as db:
            query = "SELECT id, text, metadata, vector FROM rows WHERE society=? AND owner=? ORDER BY id"
            return db.execute(query, (self._society, owner)).fetchall()

    def get(self, owner: str, *, vectors: bool = False) -> Rows:
        rows = self._rows(owner)
        held = [json.loads(r[3]) for r in rows] if vectors else []
        return Rows([r[0] for r in rows], [r[1] for r in rows], [json.loads(r[2]) for r in rows], held)

    def query(self, owner: str, vector: Sequence[float], n: int, *, exact: bool = False) -> list[tuple[str, float]]:
        rows = self._rows(owner)
        return nearest([r[0] for r in rows], [json.loads(r[3]) for r in rows], vector, n)

    def ticks(self, keys: Sequence[str]) -> dict[str, int]:
        with self._db() as db:
            stored = dict(db.execute("SELECT key, tick FROM ticks WHERE society=?", (self._society,)).fetchall())
        return {k: stored[k] for k in keys if k in stored}

    def set_ticks(self, keys: Sequence[str], tick: int) -> None:
        with self._db() as db:
            db.executemany("INSERT OR REPLACE INTO ticks VALUES (?, ?, ?)", [(self._society, k, tick) for k in keys])

    def forget_ticks(self, keys: Sequence[str]) -> None:
        with self._db() as db:
            db.executemany("DELETE FROM ticks WHERE society=? AND key=?", [(self._society, k) for k in keys])

    def claim(self) -> str | None:
        with self._db() as db:
            found = db.execute("SELECT value FROM claims WHERE society=?", (self._society,)).fetchone()
        return None if found is None else str(found[0])

    def set_claim(self, value: str | None) -> None:
        with self._db() as db:
            db.execute("DELETE FROM claims WHERE society=?", (self._society,))
            if value is not None:
                db.execute("INSERT INTO claims VALUES (?, ?)", (self._society, value))

    def drop(self, owners: Sequence[str]) -> None:
        with self._db() as db:
            db.executemany("DELETE FROM rows WHERE society=? AND owner=?", [(self._society, o) for o in owners])
            db.execute("DELETE FROM ticks WHERE society=?", (self._society,))

    def close(self) -> None:
        return None
