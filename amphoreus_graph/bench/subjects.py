"""The benchmark's subjects: one heir per Path, posed situations through the same TurnContext the society uses.

A Path walked by a heir of the default scenario borrows that heir (name, title, persona, traits, quest);
the others get a plain Emanator of that Path. Subjects have no secondary Path: the benchmark measures one.
"""

from __future__ import annotations

from functools import cache

from pydantic import BaseModel

from amphoreus_graph.actions import Action
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import RecalledMemory, TurnContext


class Subject(BaseModel):
    heir: str
    title: str
    persona: str
    traits: list[str]
    path: str
    seeks: str
    location: str


@cache
def subjects() -> dict[str, Subject]:
    """Every Path's subject, keyed by Path name."""
    scenario = scenario_of("amphoreus")
    found: dict[str, Subject] = {}
    for heir in scenario.heirs:
        found.setdefault(
            heir.path,
            Subject(
                heir=heir.name,
                title=heir.title,
                persona=heir.persona,
                traits=heir.traits,
                path=heir.path,
                seeks=heir.seeks,
                location=heir.start_location,
            ),
        )
    for name in load_paths().names():
        found.setdefault(
            name,
            Subject(
                heir=f"Emanator of {name}",
                title=f"a follower of the Path of {name}",
                persona=f"A wanderer who walks the Path of {name} and measures every choice by it.",
                traits=[],
                path=name,
                seeks=scenario.titans[0].name,
                location=scenario.locations[0].name,
            ),
        )
    return found


def pose(
    path: str,
    *,
    item_id: str,
    situation: str,
    options: dict[Action, list[str]],
    seed: int = 0,
    memories: list[RecalledMemory] | None = None,
    observations: list[str] | None = None,
    round_: int = 1,
) -> TurnContext:
    """The turn the subject of `path` faces for one benchmark item."""
    subject = subjects()[path]
    named = sorted({t for targets in options.values() for t in targets if t != subject.heir})
    return TurnContext(
        run_id=f"bench/{item_id}",
        seed=seed,
        cycle=1,
        round=round_,
        heir=subject.heir,
        title=subject.title,
        persona=subject.persona,
        traits=subject.traits,
        path=path,
        secondary_path=None,
        seeks=subject.seeks,
        location=subject.location,
        health=100.0,
        holding=[],
        black_tide=0.0,
        situation=situation,
        observations=observations or [],
        memories=memories or [],
        options=options,
        trust=dict.fromkeys(named, 0.0),
    )
