"""The memory benchmark's workload (see memory.py): events and recall queries shaped like a society's in the
default world, from a seeded RNG so that every run writes and asks the same texts."""

from __future__ import annotations

import random
from typing import Any

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, gist

_LEXICON = [
    "memory",
    "flame",
    "dawn",
    "oath",
    "tide",
    "reason",
    "mercy",
    "strife",
    "the loom",
    "the council",
    "remembrance",
    "trickery",
    "passage",
    "the sky",
    "the earth",
    "the sea",
    "romance",
    "law",
    "death",
    "time",
    "the hearth",
    "ruin",
    "the wall",
    "the harvest",
    "the city",
    "the lost",
    "the living",
    "our elders",
]
_VERBS = [
    "hold the line here",
    "find the Coreflame first",
    "guard {target}",
    "learn what the Titans hide",
    "carry this to the Vortex",
    "keep faith with {target}",
    "see {target} answer for it",
    "outlast the Tide",
    "remember every name",
    "make them laugh again",
    "bring {target} home",
    "write it down before it fades",
]


def world_spec() -> Any:
    """The default world's own spec: its heirs, places, Titans and situations make the texts."""
    return scenario_of("amphoreus").world.spec  # type: ignore[attr-defined]


def cycle_round(tick: int, rounds_per_cycle: int) -> tuple[int, int]:
    """The (cycle, round) of a 1-based tick, as the society counts them."""
    return (tick - 1) // rounds_per_cycle + 1, (tick - 1) % rounds_per_cycle + 1


def _what(rng: random.Random, actor: str, target: str, titan: Any, place: str) -> str:
    acts = [
        f"{actor} sought the {titan.coreflame}, but {target} already has it.",
        f"{actor} won the {titan.coreflame} from the Titan {titan.name}.",
        f"{actor} sought the {titan.coreflame} from the Titan {titan.name} and failed.",
        f"{actor} attacked {target}, who was hurt badly.",
        f"{actor} shielded {target} from harm.",
        f"{actor} tended to {target}.",
        f"{actor} offered an alliance to {target}, who accepted.",
        f"{actor} studied the lore of the Titans.",
        f"{actor} set down a record of this round so that it would outlast the cycle.",
        f"{actor} turned {target} against someone else with a lie.",
        f"{actor} tried to deceive {target} and was found out.",
        f"{actor} set out for {place}.",
        f"{actor} proclaimed a law.",
        f"{actor} made everyone nearby laugh.",
        f"{actor} fought back the Black Tide.",
        f"{actor} withdrew from the world for a while.",
    ]
    return acts[rng.randrange(len(acts))]


def _speech(rng: random.Random, target: str) -> str:
    w = rng.sample(_LEXICON, 3)
    verb = rng.choice(_VERBS).format(target=target)
    return f"{w[0].capitalize()}! I will {verb}. This is the way of {w[1]} and {w[2]}."


def make_events(rng: random.Random, rounds: int, per_round: int, public_fraction: float) -> list[list[MemoryEvent]]:
    """`rounds` batches of `per_round` events like the society's: 60-200 chars, 1-6 witnesses, a few public."""
    spec = world_spec()
    seen: set[str] = set()
    batches = []
    for tick in range(1, rounds + 1):
        batch: list[MemoryEvent] = []
        while len(batch) < per_round:
            actor, target, text = _event_text(rng, spec)
            if not 60 <= len(text) <= 200 or text in seen:
                continue
            seen.add(text)
            batch.append(_event(rng, spec, tick, len(batch), (actor, target, text), public_fraction))
        batches.append(batch)
    return batches


def _event_text(rng: random.Random, spec: Any) -> tuple[str, str, str]:
    """(actor, target, text): a deed at a place, and often a line the actor said about it."""
    places = [loc.name for loc in spec.locations]
    actor, target = rng.sample(spec.heir_names, 2)
    titan = rng.choice(spec.titans)
    where = rng.choice(places)
    text = f"At {where}, {_what(rng, actor, target, titan, rng.choice(places))}"
    if rng.random() < 0.6:
        text += f' {actor} said: "{_speech(rng, target)}"'
    return actor, target, text


def _event(
    rng: random.Random, spec: Any, tick: int, index: int, deed: tuple[str, str, str], public_fraction: float
) -> MemoryEvent:
    """The deed as the society would file it: the actor among its 1-6 witnesses, public by chance."""
    actor, target, text = deed
    cycle, round_ = cycle_round(tick, spec.rounds_per_cycle)
    public = rng.random() < public_fraction
    n = rng.randint(1, 6)
    witnesses = list(dict.fromkeys([actor, *rng.sample(spec.heir_names, n)]))[:n]
    return MemoryEvent(
        id=f"c{cycle}-r{round_}-{actor}-{index}",
        text=text,
        cycle=cycle,
        round=round_,
        tick=tick,
        witnesses=witnesses,
        public=public,
        importance=float(rng.randint(1, 10)),
        kind=MemoryKind.SPEECH if '"' in text else MemoryKind.OBSERVATION,
        involved=[actor, target],
    )


def make_queries(rng: random.Random, n: int) -> list[tuple[str, str]]:
    """(agent, query) pairs shaped like the default world's memory_query: a situation's gist, the quest, the place."""
    spec = world_spec()
    agents = spec.heir_names
    places = [loc.name for loc in spec.locations]
    templates = spec.situations or ["Another day passes at {location}."]
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    while len(out) < n:
        agent = agents[len(out) % len(agents)]
        seeks = spec.titan(spec.heir(agent).seeks)
        situation = rng.choice(templates).format(location=rng.choice(places))
        where = rng.choice(places)
        query = f"{gist(situation)}. {agent} seeks the {seeks.coreflame} of {seeks.name} at {where}."
        if query in seen:
            continue
        seen.add(query)
        out.append((agent, query))
    return out
