"""What happens, as memory keeps it: events with their witnesses, and when they happened."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, Field

# What `str.splitlines` breaks a line at: in a prompt, any of these would start a line of its own.
_LINE_BREAKS = re.compile("[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]+")


def one_line(text: str) -> str:
    """A text for one line of a prompt's list: each run of line breaks a space, so a memory (whose text may quote
    any speech) or a name can never start a line such as "You remember:" of its own. Unchanged if on one line."""
    return _LINE_BREAKS.sub(" ", text)


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
    public: bool = Field(default=False, description="filed once where every agent can recall it")
    secret: bool = Field(default=False, description="its witnesses may act on it but must never say it aloud")
    importance: float = Field(default=3.0, ge=1, le=10, description="the base rating; raters adjust per witness")
    kind: MemoryKind = MemoryKind.OBSERVATION
    action: str | None = None
    tags: list[str] = Field(default_factory=list, description="the action's tags: what a Path may feel about it")
    involved: list[str] = Field(default_factory=list, description="the agents it happened to (actor, target)")
    evidence: list[str] = Field(default_factory=list, description="record ids a reflection draws on")
