"""The in-process backend of RecordIndex: numpy, exact cosine, gone with the process (tests, throwaway societies).

Each owner's rows sit in a dict of their own, so one owner's query never sees another's rows. Every query
ranks every row, so `exact` changes nothing here; ties break by row id, so answers are deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from amphoreus_graph.memory.index import RowChanges, Rows, nearest


@dataclass
class _Row:
    text: str
    metadata: dict[str, str]
    vector: list[float]


class InMemoryIndex:
    """One society's rows in this process."""

    def __init__(self, society: str) -> None:
        self._society = society
        self._rows: dict[str, dict[str, _Row]] = {}  # owner -> row id -> row
        self._ticks: dict[str, int] = {}
        self._claim: str | None = None

    @property
    def society(self) -> str:
        return self._society

    @property
    def exclusive(self) -> bool:
        return False  # one instance may serve several users (Studio's runs share it); its queries are in process

    def write(self, changes: Sequence[RowChanges]) -> None:
        for change in changes:
            rows = self._rows.setdefault(change.owner, {})
            for row_id in change.deleted:
                rows.pop(row_id, None)
            written = change.written
            for row_id, text, metadata, vector in zip(
                written.ids, written.texts, written.metadatas, written.vectors, strict=True
            ):
                rows[row_id] = _Row(text, dict(metadata), [float(x) for x in vector])
            for row_id, metadata in zip(change.updated.ids, change.updated.metadatas, strict=True):
                if row_id in rows:
                    rows[row_id].metadata = dict(metadata)

    def get(self, owner: str, *, vectors: bool = False) -> Rows:
        rows = self._rows.get(owner, {})
        values = list(rows.values())
        held = [r.vector for r in values] if vectors else []
        return Rows(list(rows), [r.text for r in values], [dict(r.metadata) for r in values], held)

    def query(self, owner: str, vector: Sequence[float], n: int, *, exact: bool = False) -> list[tuple[str, float]]:
        rows = self._rows.get(owner, {})
        ids = sorted(rows)
        return nearest(ids, [rows[i].vector for i in ids], vector, n)

    def ticks(self, keys: Sequence[str]) -> dict[str, int]:
        return {k: self._ticks[k] for k in keys if k in self._ticks}

    def set_ticks(self, keys: Sequence[str], tick: int) -> None:
        self._ticks.update(dict.fromkeys(keys, tick))

    def forget_ticks(self, keys: Sequence[str]) -> None:
        for key in keys:
            self._ticks.pop(key, None)

    def claim(self) -> str | None:
        return self._claim

    def set_claim(self, value: str | None) -> None:
        self._claim = value

    def drop(self, owners: Sequence[str]) -> None:
        for owner in owners:
            self._rows.pop(owner, None)
        self._ticks.clear()

    def close(self) -> None:
        return None
