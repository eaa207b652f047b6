"""What goes into memory: events (with their witnesses) and the per-heir records filed from them."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

PUBLIC = "*"  # the owner of public records: any heir may recall them


def gist(text: str, limit: int = 160) -> str:
    """The first sentence of a memory (the fact, without the speech that followed), at most `limit` chars.

    Quoting gists, not whole memories, keeps speech from nesting memories inside memories round after round.
    """
    head = text.split(". ", 1)[0].split('"', 1)[0].rstrip(" .")
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"


class MemoryKind(StrEnum):
    OBSERVATION = "observation"
    SPEECH = "speech"
    REFLECTION = "reflection"
    SEED = "seed"
    CYCLE_ECHO = "cycle_echo"


class Moment(BaseModel):
    """When something happens: cycle and round, plus `tick`, a round count that keeps rising across cycles."""

    cycle: int
    round: int
    tick: int

    @classmethod
    def of(cls, cycle: int, round_: int, rounds_per_cycle: int) -> Moment:
        return cls(cycle=cycle, round=round_, tick=(cycle - 1) * rounds_per_cycle + round_)


class MemoryEvent(BaseModel):
    """Something that happened, embedded once and filed for every witness (or once, publicly)."""

    id: str
    text: str
    cycle: int
    round: int
    tick: int = 0
    witnesses: list[str] = Field(default_factory=list)
    public: bool = Field(default=False, description="filed once where every heir can recall it")
    secret: bool = Field(default=False, description="its witnesses may act on it but must never say it aloud")
    importance: float = Field(default=3.0, ge=1, le=10, description="the base rating; raters adjust per witness")
    kind: MemoryKind = MemoryKind.OBSERVATION
    action: str | None = None
    involved: list[str] = Field(default_factory=list, description="the heirs it happened to (actor, target)")
    evidence: list[str] = Field(default_factory=list, description="record ids a reflection draws on")


class MemoryRecord(BaseModel):
    """One heir's private copy of an event (owner PUBLIC: the society's shared copy)."""

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
        return cls(
            id=f"{event.id}@{owner}",
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
        heir's whole collection back (a resumed run's first recall) took five times as long with one key a field."""
        return {"owner": self.owner, "record": self.model_dump_json(exclude={"id", "text", "owner"})}

    @classmethod
    def from_chroma(
        cls, record_id: str, text: str, meta: dict[str, object], accessed: int | None = None
    ) -> MemoryRecord:
        """A record from its Chroma row, last accessed at `accessed` if that is later than the row says.

        Rows written before the JSON field keep one key a field (evidence ids space-joined); a JSON field Chroma
        merged in later (`update`) wins over them."""
        fields: dict[str, Any] = {**meta, "evidence": str(meta.get("evidence") or "").split()}
        if isinstance(packed := meta.get("record"), str):
            fields.update(json.loads(packed))
        if accessed is not None and accessed > int(fields["last_accessed"]):
            fields["last_accessed"] = accessed
        return cls.model_validate({**fields, "id": record_id, "text": text})
