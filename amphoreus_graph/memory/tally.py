"""What a society's memories add up to: how many records, and an order-free digest of them.

A run's checkpoint carries the tally its last filing left, so a resumed run can tell a store that is not the one it
wrote (deleted, emptied, restored from an older copy, another's) from its own, instead of going on from a different
past without a word. The digest is a sum of one hash per record (mod 2**128), so it is kept up to date as records
come and go, at the cost of one hash per record filed, never a read of the store. When a record was last recalled
is left out: marking access is not a change of what is remembered.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from amphoreus_graph.memory.records import MemoryRecord

MODULUS = 1 << 128


def record_term(holders: Sequence[str], public: bool, record: MemoryRecord) -> int:
    """A record's share of the digest, as held by each of `holders`: whose memory it is in, whether as a public
    copy, and all it holds. A public record is held once for the whole society, and counts once for every agent
    (so a store whose agents each kept their own copy tallies the same)."""
    body = record.model_dump_json(exclude={"last_accessed"}).encode()
    total = 0
    for holder in holders:
        where = f"{len(holder)}:{holder}:{int(public)}:".encode()
        total += int.from_bytes(hashlib.sha256(where + body).digest()[:16], "big")
    return total % MODULUS


@dataclass(frozen=True)
class Tally:
    """A count of records and their digest."""

    records: int = 0
    digest: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(self.records + other.records, (self.digest + other.digest) % MODULUS)

    def as_json(self) -> dict[str, Any]:
        return {"records": self.records, "digest": f"{self.digest:032x}"}

    @classmethod
    def of_json(cls, data: dict[str, Any]) -> Tally:
        return cls(int(data["records"]), int(str(data["digest"]), 16))

    def describe(self) -> str:
        return f"{self.records} records (digest {self.digest:032x})"


def not_as_left(where: str, society: str, held: Tally, expected: Tally) -> str:
    """The one line for a store that does not hold what the run's checkpoint says it left there."""
    return (
        f"{where}: society {society!r} holds {held.describe()}, but the run's checkpoint says its memories were "
        f"{expected.describe()}: the store is not this run's as it left it (emptied, restored from an older copy, "
        "or changed); expected the run's own store back, or --fresh-memory (with --resume) to rebuild it from the "
        "run's beginning"
    )
