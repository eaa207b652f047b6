"""Reflection: once a agent's unreflected importance passes the budget, it draws conclusions from its most
salient memories, each citing the records it rests on (Generative Agents' reflection, per Path).

Offline, a reflection is composed from the memories' gists and the agent's Path; with a chat model, the model
is asked for it, and a reply that cites no valid evidence falls back to the offline composition.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Protocol

from langchain_core.messages import BaseMessage, HumanMessage

from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.contracts.ids import reflection_id
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment, gist, one_line
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.memory.records import MemoryRecord
from amphoreus_graph.models.gateway import ChatCaller, MalformedOutput, ask, note


class Reflector(Protocol):
    async def areflect(self, agent: str, path: str, salient: list[MemoryRecord]) -> tuple[str, list[str]]:
        """One insight and the ids of the records it cites (async: the agents due reflect together)."""
        ...


class OfflineReflector:
    """Composes an insight from the salient memories' gists, the agent met most often in them, and the Path."""

    def __init__(self, agents: list[str], catalog: PathCatalog | None = None) -> None:
        self.agents = agents
        self.catalog = catalog or load_paths()

    def reflect(self, agent: str, path: str, salient: list[MemoryRecord]) -> tuple[str, list[str]]:
        """Up to three memories that say different things, in one sentence (its gist, as speech quotes it; names
        keep their case), who was met most, and one of the Path's tenets (drawn by the memories cited, so
        reflections vary)."""
        by_gist = {gist(r.text, 90): r for r in reversed(salient)}  # one record per gist: the most salient one
        cited = [r for r in salient if by_gist.get(gist(r.text, 90)) is r][:3]
        met = Counter(a for r in salient for a in self.agents if a != agent and a in r.text)
        tenets = self.catalog[path].tenets
        tenet = tenets[stable_rng(*(r.id for r in cited)).randrange(len(tenets))].rstrip(".")
        lines = "; ".join(gist(r.text, 90) for r in cited)
        who = f" {met.most_common(1)[0][0]} keeps crossing my path." if met else ""
        return f"{agent} reflects: {lines}.{who} The Path of {path} teaches: {tenet}.", [r.id for r in cited]

    async def areflect(self, agent: str, path: str, salient: list[MemoryRecord]) -> tuple[str, list[str]]:
        return self.reflect(agent, path, salient)


class ModelReflector:
    """Asks a chat model for one insight citing memory numbers; falls back to the offline reflector."""

    PROMPT = (
        "You are {agent}, who walks the Path of {path}. Here are your most salient memories:\n{memories}\n"
        'What is one high-level insight you draw from them? Answer as JSON: {{"insight": "...", "cites": [1, 2]}}'
    )

    def __init__(self, caller: ChatCaller, offline: OfflineReflector) -> None:
        self.caller = caller
        self.offline = offline

    async def areflect(self, agent: str, path: str, salient: list[MemoryRecord]) -> tuple[str, list[str]]:
        listing = "\n".join(f"{i}. {one_line(gist(r.text))}" for i, r in enumerate(salient, 1))
        prompt: list[BaseMessage] = [HumanMessage(self.PROMPT.format(agent=agent, path=path, memories=listing))]
        try:
            (insight, cites), _ = await ask(self.caller, prompt, lambda text: _insight(text, salient), CallStats())
            return insight, cites
        except Exception:
            note(self.caller.role, fallbacks=1)
            return self.offline.reflect(agent, path, salient)


def _insight(text: str, salient: list[MemoryRecord]) -> tuple[str, list[str]]:
    """One insight and the ids of the memories it cites, from a reply; MalformedOutput says what is missing."""
    found = re.search(r"\{.*\}", text, re.DOTALL)
    try:
        parsed = json.loads(found.group()) if found else {}
        cites = [salient[int(i) - 1].id for i in parsed.get("cites", []) if 1 <= int(i) <= len(salient)]
    except (ValueError, TypeError, AttributeError):
        raise MalformedOutput('expected {"insight": "...", "cites": [numbers of the memories above]}') from None
    insight = str(parsed.get("insight", "")).strip()
    if not insight or not cites:
        raise MalformedOutput("expected a non-empty insight citing at least one memory by its number")
    return insight, cites


def salient(records: list[MemoryRecord], n: int) -> list[MemoryRecord]:
    """The n most important memories, newest first among equals."""
    return sorted(records, key=lambda r: (-r.importance, -r.created, r.id))[:n]


def reflection_event(
    agent: str, insight: str, cites: list[str], evidence: list[MemoryRecord], now: Moment
) -> MemoryEvent:
    """A reflection is a private memory of its author, as important as what it rests on, plus one. It is secret
    if it cites a secret: its text is drawn from what it cites (the offline one quotes their gists), so a
    speakable reflection on a secret would let the agent say the secret aloud by quoting the reflection."""
    weight = sum(r.importance for r in evidence if r.id in cites) / max(1, len(cites))
    return MemoryEvent(
        id=reflection_id(now.cycle, now.round, agent),
        text=insight,
        cycle=now.cycle,
        round=now.round,
        tick=now.tick,
        witnesses=[agent],
        importance=min(10.0, weight + 1.0),
        kind=MemoryKind.REFLECTION,
        secret=any(r.secret for r in evidence if r.id in cites),
        evidence=cites,
    )
