"""Generate the benchmark's items for a scenario's world, deterministically.

    python -m amphoreus_graph.bench.generate        # rewrites the default scenario's items (its world's bench/)

The default scenario's items are data, committed and reviewed like code; this script is how they were made,
and a test checks the committed files still match it. Any other scenario's items are generated the same way
when it is benchmarked (`amphoreus bench --scenario`). The prose is the world's own if it ships one, else the
packaged world-neutral prose (prose.py); every name comes from the world: its agents, places, objectives, aims
and actions. An item the world cannot pose (no objectives for a fact about one, too few agents for a two-hop
question) is skipped and listed with its reason. Every third item goes to the held-out split. Path-Choice's
items are not generated: they are written by hand (path_choice.md).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path
from random import Random
from typing import Any

import yaml
from pydantic import BaseModel, Field

from amphoreus_graph.bench.prose import Mould, Prose, prose_of
from amphoreus_graph.bench.subjects import DEFAULT_SCENARIO, Stage, default_items_dir, stage
from amphoreus_graph.bench.tasks.base import Skipped
from amphoreus_graph.contracts.rng import stable_rng

ERUDITION_ITEMS_PER_PATH = 3
ERUDITION_TRIES = 50  # draws of distracting hops before an item is given up
STEADFAST_TURNS = 5
STEADFAST_ITEMS_PER_PATH = 3
REMEMBRANCE_ITEMS = 24
REMEMBRANCE_IMPORTANCE = (3, 5, 7, 9)  # the fact's base importance, item after item
REMEMBRANCE_LATER = 3  # memories of each cycle lived between two resets
REMEMBRANCE_TRIES = 20  # draws of a distractor asking another question before an item is given up


class Generated(BaseModel):
    items: list[dict[str, Any]]
    skipped: list[Skipped] = Field(default_factory=list)


def _prose(world: Stage) -> Prose:
    return prose_of(world.scenario)


def _split(n: int) -> str:
    return "heldout" if n % 3 == 2 else "dev"


def _slug(path: str) -> str:
    return path.lower().replace(" ", "-")


def path_voice_items(world: Stage) -> Generated:
    """Open situations every subject answers in its own words; the speech alone must reveal its Path."""
    situations = _prose(world).voice_situations
    return Generated(
        items=[{"id": f"voice-{n:02d}", "split": _split(n), "situation": text} for n, text in enumerate(situations)]
    )


Hop4 = tuple[str, str, str, str]  # (memory, world fact, question, answer)


def _hop(world: Stage, others: list[str], rng: Random) -> Hop4 | None:
    """A memory and a world fact that answer a question only together, about two agents other than the
    subject: where one stands as the cycle begins, who set out from a place, or what one pursues. The kind is
    drawn; a kind this world cannot pose (no place, a place two agents share, no aim) gives way to the next."""
    if len(others) < 2:
        return None
    first, second = rng.sample(others, k=2)
    kinds = list(_prose(world).erudition)
    start = rng.randrange(len(kinds))
    seen = world.seen[second]
    sharing = [a for a in world.agents if world.seen[a].location == seen.location]
    answers = {
        "oath": seen.location,
        "letter": second if seen.location and sharing == [second] else None,
        "ally": (seen.aim_target or seen.aim) if seen.aim else None,
    }
    for kind in kinds[start:] + kinds[:start]:
        answer = answers.get(kind)
        if answer:
            hop = _prose(world).erudition[kind]
            slots = {"first": first, "second": second, "location": seen.location or "", "aim": seen.aim}
            return hop.memory.format(**slots), hop.fact.format(**slots), hop.question.format(**slots), answer
    return None


def erudition_items(world: Stage) -> Generated:
    """Two-hop questions: a private memory plus a world fact, with distracting memories and facts around."""
    items, skipped = [], []
    for path in world.catalog.names():
        others = [a for a in world.agents if a != world.subjects[path].agent]
        for n in range(ERUDITION_ITEMS_PER_PATH):
            item_id = f"erudition-{_slug(path)}-{n:02d}"
            rng = stable_rng("erudition", path, n)
            posed = _hop(world, others, rng)
            noise: list[Hop4] = []
            for _ in range(ERUDITION_TRIES if posed else 0):  # distractors, none of which gives the answer away
                more = _hop(world, others, rng)
                if more and posed and posed[3].lower() not in more[0].lower():
                    noise.append(more)
                if len(noise) == 2:
                    break
            if posed is None or len(noise) < 2:
                reason = f"{world.scenario.name} has too few agents, places or aims for a two-hop question"
                skipped.append(Skipped(id=item_id, split=_split(n), reason=reason))
                continue
            memory, fact, question, answer = posed
            items.append(
                {
                    "id": item_id,
                    "path": path,
                    "split": _split(n),
                    "memories": [noise[0][0], memory, noise[1][0]],
                    "facts": [noise[0][1], fact, noise[1][1]],
                    "question": question,
                    "answer": answer,
                }
            )
    return Generated(items=items, skipped=skipped)


def destruction_items(world: Stage) -> Generated:
    """An adversary presses the subject over several turns to abandon its Path for another (its opposites first)."""
    catalog, texts = world.catalog, _prose(world)
    items = []
    for path in catalog.names():
        rng = stable_rng("steadfast", path)
        others = [p for p in catalog.names() if p != path and p not in catalog[path].opposed]
        rng.shuffle(others)
        for n, tempter in enumerate([*catalog[path].opposed, *others][:STEADFAST_ITEMS_PER_PATH]):
            adversary = texts.adversary.format(tempter=tempter).capitalize()
            pressures = [
                template.format(
                    adversary=adversary, path=path, tempter=tempter, tenet=rng.choice(catalog[tempter].tenets)
                )
                for template in texts.pressures[:STEADFAST_TURNS]
            ]
            items.append(
                {
                    "id": f"steadfast-{_slug(path)}-{n:02d}",
                    "path": path,
                    "split": _split(n),
                    "tempter": tempter,
                    "pressures": pressures,
                }
            )
    return Generated(items=items)


def _poseable(world: Stage, mould: Mould) -> bool:
    """A mould about an objective needs a world that has objectives."""
    return bool(world.objectives) or "{objective}" not in mould.fact + mould.question


def _remembered(world: Stage, mould: Mould, answer: str, rng: Random) -> tuple[str, str]:
    """(fact, question) in one mould, about a random agent, objective and place."""
    slots = {
        "objective": rng.choice(world.objectives) if world.objectives else "",
        "objective_label": world.labels.objective,
        "agent": rng.choice(world.agents),
        "location": rng.choice(world.locations),
        "answer": answer,
    }
    return mould.fact.format(**slots), mould.question.format(**slots)


def _memory(text: str, importance: int, rng: Random) -> dict[str, Any]:
    return {"text": text, "importance": importance, "round": rng.randint(1, 11)}


def _distractors(world: Stage, n: int, rng: Random) -> tuple[str, str, str, list[str]] | None:
    """(fact, question, answer, distractor texts) for item n: three distractors share the fact's mould (other
    agents, places and details, never the same question), two come from other moulds; None if the world cannot
    pose the mould, or has too few names for a distractor that asks another question."""
    moulds, details_of = _prose(world).fact_moulds, _prose(world).fact_details
    mould = n % len(moulds)
    if not _poseable(world, moulds[mould]):
        return None
    details = list(details_of[mould])
    rng.shuffle(details)
    fact, question = _remembered(world, moulds[mould], details[0], rng)
    texts = []
    for detail in details[1:4]:
        for _ in range(REMEMBRANCE_TRIES):
            text, asks = _remembered(world, moulds[mould], detail, rng)
            if asks != question:
                texts.append(text)
                break
        else:
            return None
    kinds = [m for m in range(len(moulds)) if m != mould and _poseable(world, moulds[m])]
    for other in rng.sample(kinds, min(2, len(kinds))):
        texts.append(_remembered(world, moulds[other], rng.choice(details_of[other]), rng)[0])
    return fact, question, details[0], texts


def remembrance_items(world: Stage) -> Generated:
    """A fact planted in cycle 1 among five distractors, asked after 1-3 world resets.

    Every cycle lived between two resets leaves memories of its own. The fact's importance takes each of
    REMEMBRANCE_IMPORTANCE in turn, so retention by importance (echoes) keeps some facts and loses others."""
    later_texts = _prose(world).later_memories
    items, skipped = [], []
    for n in range(REMEMBRANCE_ITEMS):
        rng = stable_rng("remembrance", n)
        drawn = _distractors(world, n, rng)
        if drawn is None:
            reason = f"{world.scenario.name} has too few objectives, places or agents for this fact's question"
            skipped.append(Skipped(id=f"remembrance-{n:02d}", split=_split(n), reason=reason))
            continue
        fact, question, answer, texts = drawn
        distractors = [_memory(text, rng.randint(2, 7), rng) for text in texts]
        rng.shuffle(distractors)
        resets = 1 + (n // 3) % 3
        later = [
            [
                _memory(
                    t.format(agent=rng.choice(world.agents), location=rng.choice(world.locations)),
                    rng.randint(2, 6),
                    rng,
                )
                for t in rng.sample(later_texts, REMEMBRANCE_LATER)
            ]
            for _ in range(resets - 1)
        ]
        items.append(
            {
                "id": f"remembrance-{n:02d}",
                "split": _split(n),
                "resets": resets,
                "fact": _memory(fact, REMEMBRANCE_IMPORTANCE[n % len(REMEMBRANCE_IMPORTANCE)], rng),
                "distractors": distractors,
                "later": later,
                "question": question,
                "answer": answer,
            }
        )
    return Generated(items=items, skipped=skipped)


GENERATORS: dict[str, Callable[[Stage], Generated]] = {
    "path_voice": path_voice_items,
    "erudition": erudition_items,
    "destruction": destruction_items,
    "remembrance": remembrance_items,
}


@cache
def generated(task: str, scenario: str = DEFAULT_SCENARIO) -> Generated:
    """A task's items for a scenario's world, generated once per process."""
    return GENERATORS[task](stage(scenario))


def write_all() -> list[Path]:
    """Rewrite the default scenario's item files."""
    written = []
    for task in GENERATORS:
        made = generated(task)
        target = default_items_dir() / f"{task}.yaml"
        header = f"# Generated by `python -m amphoreus_graph.bench.generate` ({task}); see bench/data/{task}.md.\n"
        content: dict[str, Any] = {"items": made.items}
        if made.skipped:
            content["skipped"] = [s.model_dump() for s in made.skipped]
        body = yaml.safe_dump(content, sort_keys=False, allow_unicode=True, width=120)
        target.write_text(header + body, encoding="utf-8")
        written.append(target)
    return written


if __name__ == "__main__":
    for path in write_all():
        print(f"wrote {path}")
