"""What goes into memory: events (with their witnesses) and the per-heir records filed from them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, Field


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


class MemoryEvent(BaseModel):
    """Something that happened, embedded once and filed for every witness."""

    id: str
    text: str
    cycle: int
    round: int
    witnesses: list[str]
    importance: float = Field(default=3.0, ge=1, le=10)
    kind: MemoryKind = MemoryKind.OBSERVATION


class MemoryRecord(BaseModel):
    """One heir's private copy of an event."""

    id: str
    owner: str
    text: str
    event_id: str
    cycle: int
    round: int
    importance: float
    kind: MemoryKind

    @classmethod
    def of(cls, event: MemoryEvent, owner: str) -> MemoryRecord:
        return cls(
            id=f"{event.id}@{owner}",
            owner=owner,
            text=event.text,
            event_id=event.id,
            cycle=event.cycle,
            round=event.round,
            importance=event.importance,
            kind=event.kind,
        )

    def metadata(self) -> dict[str, str | int | float]:
        return self.model_dump(mode="json", exclude={"id", "text"})
