"""What an agent notices of a round: everything it took part in, and at most `bandwidth` of what it only saw.

In a crowd every agent witnesses everyone near it, so the records a round files grow with the square of the
society; attention keeps them growing with the society (Generative Agents' attention bandwidth). A bystander
notices the most important events first; ties are broken by a draw seeded per event and witness, so no agent's
deeds are noticed first for their place in the roster.
"""

from __future__ import annotations

import hashlib

from amphoreus_graph.contracts.memory import MemoryEvent


def attend(events: list[MemoryEvent], bandwidth: int | None, salt: str) -> list[MemoryEvent]:
    """The round's events with each event's witnesses cut to those who noticed it: its `involved` always, and
    each bystander's `bandwidth` most important events of the round. Public events are everyone's news, kept
    whole; `bandwidth` None keeps every witness.

    Worked out bystander by bystander, drawing tie-breaks only among the events tied at its cut: in a crowd an
    event has thousands of bystanders, and ranking every (event, bystander) pair at once held them all in memory
    (17 million at 10,000 agents in six places)."""
    if bandwidth is None:
        return events
    candidates: dict[str, list[int]] = {}
    for i, event in enumerate(events):
        if event.public:
            continue
        involved = set(event.involved)
        for witness in dict.fromkeys(event.witnesses):
            if witness not in involved:
                candidates.setdefault(witness, []).append(i)
    rank = [-event.importance for event in events]
    noticed: dict[int, set[str]] = {}
    for witness, found in candidates.items():
        for i in _most_important(found, events, rank, bandwidth, salt, witness):
            noticed.setdefault(i, set()).add(witness)
    kept = []
    for i, event in enumerate(events):
        if event.public:
            kept.append(event)
            continue
        keep = noticed.get(i, set()).union(event.involved)
        kept.append(event.model_copy(update={"witnesses": [w for w in event.witnesses if w in keep]}))
    return kept


def _most_important(
    found: list[int], events: list[MemoryEvent], rank: list[float], bandwidth: int, salt: str, witness: str
) -> list[int]:
    """The `bandwidth` events (indices, in `found`'s order among equals) that `witness` notices: the most
    important first, ties at the cut broken by a draw seeded per event and witness."""
    if len(found) <= bandwidth:
        return found
    if bandwidth == 0:
        return []
    ranked = sorted(found, key=rank.__getitem__)  # most important first; stable: event order among equals
    cut = rank[ranked[bandwidth - 1]]
    above = [i for i in ranked if rank[i] < cut]
    tied = sorted((i for i in ranked if rank[i] == cut), key=lambda i: _draw(salt, events[i].id, witness))
    return above + tied[: bandwidth - len(above)]


def _draw(*parts: str) -> bytes:
    """A tie-break that is the same in every process (Python's hash() is salted per process)."""
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).digest()
