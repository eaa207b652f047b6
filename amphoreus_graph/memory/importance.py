"""How much a memory matters to the agent who keeps it (1-10).

Offline: the event's base weight from the game master, more if the agent was involved, more if the act is one
its Path feels strongly about (by the act's tags). With a chat model: the model rates each event once (cached
by event id); a failed rating falls back to the offline one.
"""

from __future__ import annotations

import re
from typing import Protocol

from langchain_core.language_models import BaseChatModel

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.actions import ActionBrief
from amphoreus_graph.contracts.memory import MemoryEvent


class ImportanceRater(Protocol):
    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        """Importance of each event (by id) for each of its witnesses."""
        ...


def _clamp(value: float) -> float:
    return round(max(1.0, min(10.0, value)), 3)


class PathImportance:
    """Offline rating by event kind (the game master's base weight), involvement and Path."""

    def __init__(self, scenario: Scenario) -> None:
        self._path_of = {a.name: scenario.catalog[a.path] for a in scenario.agents}

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        return {e.id: {w: self.rate_one(e, w) for w in e.witnesses} for e in events}

    def rate_one(self, event: MemoryEvent, witness: str) -> float:
        value = event.importance
        if witness in event.involved:
            value += 2.0 if event.involved and event.involved[0] != witness else 1.0
        path = self._path_of.get(witness)
        if path is not None and event.tags:
            feeling = path.affinity(ActionBrief(tags=event.tags))
            value += 1.0 if abs(feeling) >= 0.7 else 0.0
        return _clamp(value)


class ModelImportance:
    """Asks a chat model to rate each event once (cached), then adjusts per witness like the offline rater."""

    PROMPT = (
        "The world: {world}\n"
        "On a scale of 1 (mundane, e.g. someone rested) to 10 (world-changing, e.g. what everyone strives for won "
        "or lost, a betrayal), how important is this event in that world? Answer with one integer.\n"
        "Event: {text}"
    )

    def __init__(self, model: BaseChatModel, offline: PathImportance, world: str = "") -> None:
        self.model = model
        self.offline = offline
        self.world = world
        self._cache: dict[str, float] = {}

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        todo = [e for e in events if e.id not in self._cache]
        if todo:
            replies = self.model.batch(
                [self.PROMPT.format(world=self.world, text=e.text) for e in todo], return_exceptions=True
            )
            for event, reply in zip(todo, replies, strict=True):
                number = re.search(r"\d+", str(getattr(reply, "content", "")))
                self._cache[event.id] = _clamp(float(number.group())) if number else event.importance
        out: dict[str, dict[str, float]] = {}
        for event in events:
            based = event.model_copy(update={"importance": self._cache[event.id]})
            out[event.id] = {w: self.offline.rate_one(based, w) for w in event.witnesses}
        return out
