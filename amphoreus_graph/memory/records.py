"""What memory keeps: the per-agent records filed from events (events themselves are in contracts/memory.py)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from amphoreus_graph.contracts.ids import PUBLIC_HOLDER, record_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind

PUBLIC = PUBLIC_HOLDER  # the owner of public records: any agent may recall them
# Whose index holds a society's public records, once for every agent: a control character, which no agent's name may
# hold (catalogs/names.py), and Remembrance refuses an agent named exactly this, so no name reaches it as its own.
SHARED_HOLDER = "\x1fpublic"


class MemoryRecord(BaseModel):
    """One agent's private copy of an event (owner PUBLIC: the society's shared copy)."""

    id: str
    owner: str
    text: str
    event_id: str
    cycle: int
    round: int
    created: int = Field(description="tick it was filed")
    last_accessed: int = Field(description="tick it was last recalled")
    importance: float
    kind: MemoryKind
    secret: bool = Field(default=False, description="the owner may act on it but must never say it aloud")
    evidence: list[str] = Field(default_factory=list)
    carried_to: int = Field(default=0, description="the last cycle retention already carried it into")

    @classmethod
    def of(cls, event: MemoryEvent, owner: str, importance: float) -> MemoryRecord:
        """`owner`'s record of the event (PUBLIC for a public event's copy). Its id names the holder through
        `record_id`, so no agent's name (not even `*`) gives an id another holder's record has."""
        return cls(
            id=record_id(event.id, None if event.public else owner),
            owner=owner,
            text=event.text,
            event_id=event.id,
            cycle=event.cycle,
            round=event.round,
            created=event.tick,
            last_accessed=event.tick,
            importance=importance,
            kind=event.kind,
            secret=event.secret,
            evidence=event.evidence,
        )

    def metadata(self) -> dict[str, str | int | float]:
        """Chroma metadata: the owner as its own key (so the store can be audited by owner in Chroma itself), every
        other field in one JSON string. Each metadata key is a row per record in Chroma's SQLite, and reading a
        agent's whole collection back (a resumed run's first recall) took five times as long with one key a field."""
        return {"owner": self.owner, "record": self.model_dump_json(exclude={"id", "text", "owner"})}
