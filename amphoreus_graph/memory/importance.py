"""How much a memory matters to the agent who keeps it (1-10).

Offline: the event's base weight from the game master, more if the agent was involved, more if the act is one
its Path feels strongly about (by the act's tags). With a chat model: the model rates each event once (cached
by event id); a failed rating falls back to the offline one.
"""

from __future__ import annotations

import asyncio
import re
from typing import Protocol

from langchain_core.messages import BaseMessage, HumanMessage

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.actions import ActionBrief
from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.policy.gateway import ChatCaller, MalformedOutput, ask, note


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

    def __init__(self, caller: ChatCaller, offline: PathImportance, world: str = "") -> None:
        self.caller = caller
        self.offline = offline
        self.world = world
        self._cache: dict[str, float] = {}

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        todo = [e for e in events if e.id not in self._cache]
        if todo:
            for event, rating in zip(todo, asyncio.run(self._ask(todo)), strict=True):
                self._cache[event.id] = event.importance if rating is None else rating
        out: dict[str, dict[str, float]] = {}
        for event in events:
            based = event.model_copy(update={"importance": self._cache[event.id]})
            out[event.id] = {w: self.offline.rate_one(based, w) for w in event.witnesses}
        return out

    async def _ask(self, events: list[MemoryEvent]) -> list[float | None]:
        """Each event's rating from the model (its calls run together, bounded by the gateway's slots); None
        where the model failed or did not answer with a number (the base weight stands, counted a fallback)."""
        return list(await asyncio.gather(*(self._rate_one(e) for e in events)))

    async def _rate_one(self, event: MemoryEvent) -> float | None:
        prompt: list[BaseMessage] = [HumanMessage(self.PROMPT.format(world=self.world, text=event.text))]
        try:
            rating, _ = await ask(self.caller, prompt, _rating, CallStats())
            return rating
        except Exception:
            note(self.caller.role, fallbacks=1)
            return None


def _rating(text: str) -> float:
    number = re.search(r"\d+", text)
    if number is None:
        raise MalformedOutput("the reply holds no integer; expected one integer from 1 to 10")
    return _clamp(float(number.group()))
