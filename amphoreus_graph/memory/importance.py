"""How much a memory matters to the agent who keeps it (1-10).

Offline: the event's base weight from the game master, more if the agent was involved, more if the act is one
its Path feels strongly about (by the act's tags). With a chat model: the model rates the round's new events in one
call (each text once, cached by text); a failed rating keeps the event's base weight.
"""

from __future__ import annotations

import asyncio
from typing import Protocol

from langchain_core.messages import HumanMessage
from pydantic import BaseModel, StrictFloat, StrictInt

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.actions import ActionBrief
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, one_line
from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.models.gateway import ChatCaller, MalformedOutput, ask, note
from amphoreus_graph.models.replies import parse_reply
from amphoreus_graph.models.structured import ReplyFormat


class ImportanceRater(Protocol):
    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        """Importance of each event (by id) for each of its witnesses."""
        ...

    def rate_now(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        """The same without waiting on a model: what recall ranks events by before they are filed."""
        ...


def _clamp(value: float) -> float:
    return round(max(1.0, min(10.0, value)), 3)


class PathImportance:
    """Offline rating by event kind (the game master's base weight), involvement and Path."""

    def __init__(self, scenario: Scenario) -> None:
        self._path_of = {a.name: scenario.catalog[a.path] for a in scenario.agents}

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        return {e.id: {w: self.rate_one(e, w) for w in e.witnesses} for e in events}

    rate_now = rate

    def rate_one(self, event: MemoryEvent, witness: str) -> float:
        value = event.importance
        if witness in event.involved:
            value += 2.0 if event.involved and event.involved[0] != witness else 1.0
        path = self._path_of.get(witness)
        if path is not None and event.tags:
            feeling = path.affinity(ActionBrief(tags=event.tags))
            value += 1.0 if abs(feeling) >= 0.7 else 0.0
        return _clamp(value)


KEPT = frozenset({MemoryKind.SEED, MemoryKind.REFLECTION})  # importance set by whoever made the memory


class ModelImportance:
    """Asks a chat model to rate a round's new events in one call (each distinct text once, cached by text), then
    adjusts per witness like the offline rater."""

    PROMPT = (
        "The world: {world}\n"
        "On a scale of 1 (mundane, e.g. someone rested) to 10 (world-changing, e.g. what everyone strives for won "
        "or lost, a betrayal), how important is each event below in that world? {answer}\n"
        "Events:\n{events}"
    )
    ANSWER = 'Answer as JSON: {"ratings": [one integer per event, in the order listed]}.'
    BATCH = 40  # events per call at most: a huge round's list is split, its calls run together

    def __init__(self, caller: ChatCaller, offline: PathImportance, world: str = "") -> None:
        self.caller = caller
        self.offline = offline
        self.world = world
        self._cache: dict[str, float | None] = {}  # text -> the model's rating (None: it gave none usable)

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        """Observations and speech as the model rates them; a seed's importance (set by the world's author) and a
        reflection's (set by the evidence it rests on) are kept."""
        asked = [e for e in events if e.kind not in KEPT]
        todo = list(dict.fromkeys(e.text for e in asked if e.text not in self._cache))
        if todo:
            for text, rating in zip(todo, asyncio.run(self._ask(todo)), strict=True):
                self._cache[text] = rating
        out: dict[str, dict[str, float]] = {}
        for event in events:
            rated = self._cache.get(event.text) if event.kind not in KEPT else None
            based = event if rated is None else event.model_copy(update={"importance": rated})
            out[event.id] = {w: self.offline.rate_one(based, w) for w in event.witnesses}
        return out

    def rate_now(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        """The offline rating: the same whatever the model has rated so far, so a resumed run recalls alike."""
        return self.offline.rate(events)

    async def _ask(self, texts: list[str]) -> list[float | None]:
        """Each text's rating from the model, BATCH texts a call (the calls run together, bounded by the gateway's
        slots); None throughout a batch whose call failed or whose reply was unusable after the repair pass (the
        base weights stand, counted one fallback)."""
        batches = [texts[i : i + self.BATCH] for i in range(0, len(texts), self.BATCH)]
        rated = await asyncio.gather(*(self._rate_batch(batch) for batch in batches))
        return [rating for batch in rated for rating in batch]

    async def _rate_batch(self, texts: list[str]) -> list[float | None]:
        listing = "\n".join(f"{i}. {one_line(text)}" for i, text in enumerate(texts, 1))
        prompt = self.PROMPT.format(world=self.world, answer=self.ANSWER, events=listing)
        try:
            ratings, _ = await ask(
                self.caller,
                [HumanMessage(prompt)],
                lambda reply: _ratings(reply, len(texts)),
                CallStats(),
                reply_format=RATINGS_FORMAT,
            )
            return list(ratings)
        except Exception:
            note(self.caller.role, fallbacks=1)
            return [None] * len(texts)


RATINGS_FORMAT = ReplyFormat(
    name="importance_ratings",
    schema={
        "type": "object",
        "properties": {"ratings": {"type": "array", "items": {"type": "integer"}}},
        "required": ["ratings"],
        "additionalProperties": False,
    },
)


class _Ratings(BaseModel):
    ratings: list[StrictInt | StrictFloat]  # numbers only: no true/false, no "7"


def _ratings(text: str, expected: int) -> list[float]:
    """The reply's ratings, clamped to 1-10: exactly one number per listed event."""
    ratings = parse_reply(text, _Ratings).ratings
    if len(ratings) != expected:
        raise MalformedOutput(f"expected {expected} ratings, one per event, got {len(ratings)}")
    return [_clamp(float(r)) for r in ratings]
