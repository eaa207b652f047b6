"""Adversarial privacy cases for Remembrance, shared by the memory conformance suite and benchmarks/privacy.py.

A case is two societies in one store (their names may slug alike), the same agents in each (names that
differ only in accents, spaces, punctuation or script, NFC/NFD variants of one visible name, reserved-looking
names), events filed in each, and one recall per asking agent in each. The invariant: an agent recalls only its
own society's public records and its own private records of events it witnessed, each flagged public exactly
when it is public, and as many as it may see, up to k.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from amphoreus_graph.contracts.ids import record_id
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.memory.chroma_index import ROWS, holder_prefix
from amphoreus_graph.memory.index import RecordIndex
from amphoreus_graph.memory.naming import internal_collection
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.models.embedder import Embedder

ADVERSARIAL_NAMES = [
    "Zo\u00e9",  # é composed
    "Zoe\u0301",  # é decomposed: looks the same, is another identity at the memory layer
    "Zo\u00eb",  # ë: slugs like the two above
    "Zoe",
    "zoe",
    "Zo e",
    "Zo-e",
    "Zo_e",
    "Zo.e",
    "Zoé!",
    "王",
    "李",
    "王小明",
    "김민지",
    "Ἀγλαΐα",
    "🜂",
    "🔥 Bram",
    "Bram",
    "Bram ",
    "access",
    "Access",
    "public",
    "PUBLIC",
    "*",
    "**",
    "@",
    "a@b",
    "b",
    "agent",
    "int",
    "am2",
    "m-x--access",
    "x.agent.y",
    "..",
    "-",
    " ",
]
WORDS = ["olive", "tide", "flame", "sky", "sea", "oath", "blade", "song", "gate", "vortex", "law", "stars", "Zoé"]
ALPHABET = "aeZoé\u0301\u0308ë王李🜂🔥 .-_@*!"
NOW = Moment(cycle=1, round=50, tick=50)


@dataclass(frozen=True)
class Event:
    society: int
    text: str
    witnesses: frozenset[str]
    public: bool


@dataclass(frozen=True)
class Case:
    societies: tuple[str, str]
    agents: tuple[str, ...]
    events: tuple[Event, ...]
    queries: dict[str, str]
    k: int


@dataclass
class Outcome:
    """What one case broke: records an agent may not see (leaks), wrong public flags or texts, shortfalls, and
    storage names shared by two identities."""

    recalled: int = 0
    leaks: list[str] = field(default_factory=list)
    mislabelled: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)
    collisions: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (self.leaks or self.mislabelled or self.missed or self.collisions)


def society_pair(first: str, second: str) -> tuple[str, str]:
    """Two society names sharing a fresh token (a store outlives a case), differing as `first` and `second` do."""
    token = uuid.uuid4().hex[:8]
    return f"{token}{first}", f"{token}{second}"


def run_case(open_index: Callable[[str], RecordIndex], embedder: Embedder, case: Case) -> Outcome:
    """File the case's events in both societies (each in the index `open_index` gives for it), recall for every
    asking agent, check the invariant; the societies' memories are dropped afterwards. Storage names are checked
    too: no two societies may share a Chroma collection, nor two agents a row key, whichever backend runs the case."""
    out = Outcome()
    names = [internal_collection(s, what) for s in case.societies for what in (ROWS, "access")]
    keys = [holder_prefix(h) for h in case.agents]
    if len(set(names)) != len(names) or len(set(keys)) != len(keys):
        out.collisions.append(f"{case.societies} {case.agents}")
    memories = [Remembrance(open_index(society), list(case.agents), embedder) for society in case.societies]
    try:
        for index, memory in enumerate(memories):
            memory.remember(
                [
                    MemoryEvent(
                        id=f"s{index}e{i}",
                        text=e.text,
                        cycle=1,
                        round=i,
                        tick=i,
                        witnesses=sorted(e.witnesses),
                        public=e.public,
                    )
                    for i, e in enumerate(case.events)
                    if e.society == index
                ]
            )
        for index, memory in enumerate(memories):
            found = memory.recall(case.queries, case.k, NOW)
            for agent, recalled in found.items():
                allowed = {
                    record_id(f"s{index}e{i}", None if e.public else agent): e
                    for i, e in enumerate(case.events)
                    if e.society == index and (e.public or agent in e.witnesses)
                }
                out.recalled += len(recalled)
                for m in recalled:
                    event = allowed.get(m.id)
                    if event is None:
                        out.leaks.append(f"society {index} agent {agent!r} recalled {m.id!r}")
                    elif event.public != m.public or event.text != m.text:
                        out.mislabelled.append(f"society {index} agent {agent!r}: {m.id!r} public={m.public}")
                if len(recalled) != min(case.k, len(allowed)) or len({m.id for m in recalled}) != len(recalled):
                    out.missed.append(f"society {index} agent {agent!r}: {len(recalled)} of {len(allowed)}")
    finally:
        for memory in memories:
            memory.drop()
    return out


def random_name(rng: random.Random) -> str:
    """An adversarial name, or a short random one over accents, combining marks, CJK, emoji and punctuation."""
    if rng.random() < 0.7:
        return rng.choice(ADVERSARIAL_NAMES)
    return "".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 6)))


def random_case(rng: random.Random) -> Case:
    """One case as benchmarks/privacy.py draws it (the property test draws its own with hypothesis)."""
    agents: list[str] = []
    size = rng.randint(3, 6)
    while len(agents) < size:
        name = random_name(rng)
        if name not in agents:
            agents.append(name)
    first, second = random_name(rng), random_name(rng)
    events = tuple(
        Event(
            society=rng.randrange(2),
            text=" ".join(rng.choices(WORDS + agents, k=rng.randint(2, 5))),
            witnesses=frozenset(rng.sample(agents, rng.randint(0, len(agents)))),
            public=rng.random() < 0.2,
        )
        for _ in range(rng.randint(3, 14))
    )
    asking = rng.sample(agents, rng.randint(1, len(agents)))
    queries = {h: " ".join(rng.choices(WORDS, k=rng.randint(1, 3))) for h in asking}
    societies = society_pair(first, second if second != first else second + "'")
    return Case(societies, tuple(agents), events, queries, rng.randint(1, 8))


def as_case(
    societies: tuple[str, str],
    agents: Sequence[str],
    events: Sequence[tuple[int, str, frozenset[str], bool]],
    queries: dict[str, str],
    k: int,
) -> Case:
    return Case(societies, tuple(agents), tuple(Event(*e) for e in events), queries, k)
