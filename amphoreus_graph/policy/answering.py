"""Answering a question from what is known: a memory and an observation joined by a name they share, or else the
one memory that speaks to the question.

The offline policy's way to combine what it remembers with what it sees (Erudition's two-hop questions): the
memory nearest the question in meaning names something the question does not (the bridge: a place, a person);
the observation that mentions the bridge, nearest the question among those, carries the answer. No table of any
world or benchmark is read: only the turn's own texts and the sentence embedder.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:  # the embedder is handed in
    from amphoreus_graph.models.embedder import Embedder

NAME = re.compile(r"\b[A-Z][\w'-]+")
ASIDE = frozenset({"I", "The", "A", "An", "At", "In", "On", "Who", "What", "Where", "When", "Why", "How", "Which"})


def names(text: str) -> set[str]:
    """The capitalised words of a text that may name someone or something (not sentence-openers like 'The')."""
    return {word for word in NAME.findall(text) if word not in ASIDE}


def asks(situation: str) -> str | None:
    """The question a situation asks (its last sentence that ends in '?'), if any."""
    found = [s.strip() for s in re.split(r"(?<=[.!?])\s+", situation) if s.strip().endswith("?")]
    return found[-1] if found else None


def two_hop(question: str, memories: list[str], facts: list[str], embedder: Embedder) -> tuple[str, str] | None:
    """(memory, observation) that answer the question together, or None when no memory leads to one."""
    if not memories or not facts:
        return None
    vectors = embedder.encode([question, *memories, *facts])
    asked, remembered, seen = vectors[0], vectors[1 : 1 + len(memories)], vectors[1 + len(memories) :]
    for m in _by_relevance(question, memories, remembered @ asked):
        bridges = names(memories[m]) - names(question)
        linked = [f for f in range(len(facts)) if bridges & names(facts[f])]
        if linked:
            best = max(linked, key=lambda f: float(seen[f] @ (asked + remembered[m])))
            return memories[m], facts[best]
    return None


def nearest_memory(question: str, memories: list[str], embedder: Embedder) -> str | None:
    """The memory that shares most names with the question, then is nearest it in meaning (one hop)."""
    if not memories:
        return None
    vectors = embedder.encode([question, *memories])
    return memories[_by_relevance(question, memories, vectors[1:] @ vectors[0])[0]]


def _by_relevance(question: str, memories: list[str], nearness: NDArray[np.float32]) -> list[int]:
    """The memories' indices, those sharing most names with the question first, then the nearest in meaning
    (`nearness`: each memory's similarity to the question), then in their own order."""
    asked = names(question)
    return sorted(range(len(memories)), key=lambda m: (-len(names(memories[m]) & asked), -float(nearness[m])))
