"""What an agent notices of a round: everything it took part in, and at most `bandwidth` of what it only saw.

In a crowd every agent witnesses everyone near it, so the records a round files grow with the square of the
society; attention keeps them growing with the society (Generative Agents' attention bandwidth). A bystander
notices the most important events first; ties are broken by a draw seeded per event and witness, so no agent's
deeds are noticed first for their place in the roster.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from amphoreus_graph.contracts.memory import MemoryEvent


def attend(events: list[MemoryEvent], bandwidth: int | None, salt: str) -> list[MemoryEvent]:
    """The round's events with each event's witnesses cut to those who noticed it: its `involved` always, and
    each bystander's `bandwidth` most important events of the round. Public events are everyone's news, kept
    whole; `bandwidth` None keeps every witness."""
    if bandwidth is None:
        return events
    seen = [
        (i, witness)
        for i, event in enumerate(events)
        if not event.public
        for witness in dict.fromkeys(event.witnesses)
        if witness not in event.involved
    ]
    seen.sort(key=lambda pair: (-events[pair[0]].importance, _draw(salt, events[pair[0]].id, pair[1])))
    noticed: Counter[str] = Counter()
    kept: set[tuple[int, str]] = set()
    for i, witness in seen:
        if noticed[witness] < bandwidth:
            noticed[witness] += 1
            kept.add((i, witness))
    return [
        event
        if event.public
        else event.model_copy(
            update={"witnesses": [w for w in event.witnesses if w in event.involved or (i, w) in kept]}
        )
        for i, event in enumerate(events)
    ]


def _draw(*parts: str) -> bytes:
    """A tie-break that is the same in every process (Python's hash() is salted per process)."""
    return hashlib.blake2b("|".join(parts).encode(), digest_size=8).digest()
