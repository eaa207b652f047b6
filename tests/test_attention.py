"""Attention: a bystander notices at most `memory.attention` events a round, the most important first; what an
agent took part in and public news are always kept."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.contracts.memory import MemoryEvent
from amphoreus_graph.memory.attention import attend
from amphoreus_graph.society.chronicle import iter_chronicle
from amphoreus_graph.society.runner import RunConfig, Simulation

FAIR = Path(__file__).resolve().parents[1] / "amphoreus_graph" / "worlds" / "fair" / "fair.yaml"


def _event(i: int, witnesses: list[str], involved: list[str], importance: float = 3.0, public: bool = False):
    return MemoryEvent(
        id=f"e{i}", text=f"event {i}", cycle=1, round=1, witnesses=witnesses, involved=involved,
        importance=importance, public=public,
    )  # fmt: skip


def test_unlimited_attention_keeps_every_witness():
    events = [_event(i, ["a", "b", "c"], ["a"]) for i in range(5)]
    assert attend(events, None, "s") == events


def test_a_bystander_keeps_its_bandwidth_of_the_most_important_events():
    events = [_event(i, ["actor", "watcher"], ["actor"], importance=1.0 + i) for i in range(6)]
    noticed = attend(events, 2, "s")
    assert [e.id for e in noticed if "watcher" in e.witnesses] == ["e4", "e5"]
    assert all("actor" in e.witnesses for e in noticed), "what an agent took part in is always kept"


def test_public_news_and_the_involved_are_never_cut():
    events = [
        _event(0, ["a", "b", "c"], ["a", "b"]),
        _event(1, ["a", "b", "c"], [], public=True, importance=9.0),
        _event(2, ["c"], []),
        _event(3, ["c"], []),
    ]
    noticed = attend(events, 0, "s")
    assert noticed[0].witnesses == ["a", "b"]
    assert noticed[1] == events[1]
    assert noticed[2].witnesses == [] and noticed[3].witnesses == []


def test_ties_are_drawn_per_witness_not_by_roster_order():
    """Equal importance: who notices what depends on the salt and the witness, the same in every process."""
    events = [_event(i, [f"actor{i}", *(f"w{j}" for j in range(8))], [f"actor{i}"]) for i in range(8)]
    once, again = attend(events, 1, "run-1"), attend(events, 1, "run-1")
    assert once == again
    first_pick = {w: next(e.id for e in once if w in e.witnesses and not w.startswith("actor")) for w in
                  (f"w{j}" for j in range(8))}  # fmt: skip
    assert len(set(first_pick.values())) > 1, "every bystander noticed the same (first) event"
    assert attend(events, 1, "run-2") != once


def _every_pair_ranked(events: list[MemoryEvent], bandwidth: int, salt: str) -> list[MemoryEvent]:
    """The definition, ranking every (event, bystander) pair at once: what `attend` must give, without the memory."""
    from amphoreus_graph.memory.attention import _draw

    seen = [
        (i, w) for i, e in enumerate(events) if not e.public for w in dict.fromkeys(e.witnesses) if w not in e.involved
    ]
    seen.sort(key=lambda pair: (-events[pair[0]].importance, _draw(salt, events[pair[0]].id, pair[1])))
    noticed: Counter[str] = Counter()
    kept = set()
    for i, w in seen:
        if noticed[w] < bandwidth:
            noticed[w] += 1
            kept.add((i, w))
    return [
        e
        if e.public
        else e.model_copy(update={"witnesses": [w for w in e.witnesses if w in e.involved or (i, w) in kept]})
        for i, e in enumerate(events)
    ]


@pytest.mark.parametrize("seed", range(40))
def test_attention_notices_what_ranking_every_pair_would(seed):
    import random

    rng = random.Random(seed)
    agents = [f"agent {k}" for k in range(rng.randint(2, 30))]
    events = []
    for i in range(rng.randint(0, 40)):
        witnesses = rng.sample(agents, rng.randint(1, len(agents)))
        witnesses += rng.sample(witnesses, rng.randint(0, min(2, len(witnesses))))  # a witness listed twice counts once
        involved = rng.sample(witnesses, rng.randint(0, min(2, len(witnesses))))
        importance = float(rng.choice([1, 2, 3, 3, 3, 5, 8]))
        events.append(_event(i, witnesses, involved, importance=importance, public=rng.random() < 0.1))
    bandwidth = rng.randint(0, 6)
    assert attend(events, bandwidth, f"salt-{seed}") == _every_pair_ranked(events, bandwidth, f"salt-{seed}")


def _crowded_fair(tmp_path: Path, attention: int | None) -> str:
    """Brindle Green with 24 villagers (clones) in its six places, so most events have many bystanders."""
    spec = yaml.safe_load(FAIR.read_text(encoding="utf-8"))
    villagers = []
    for i in range(24):
        base = dict(spec["agents"][i % len(spec["agents"])])
        base.pop("relationships", None)
        base["name"] = f"{base['name']} {i}"
        villagers.append(base)
    spec.update(agents=villagers, seeds=None, paths=None)
    spec["memory"] = {"attention": attention}
    for action in spec["actions"]:
        if "resolver" in action:
            action["resolver"] = str(FAIR.parent / action["resolver"])
    path = tmp_path / f"crowd-{attention}.yaml"
    path.write_text(yaml.safe_dump({k: v for k, v in spec.items() if v is not None}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("attention", [None, 1])
async def test_a_crowd_files_what_each_villager_noticed(tmp_path, attention):
    out = tmp_path / "run"
    sim = Simulation(RunConfig(scenario=_crowded_fair(tmp_path, attention), cycles=1, rounds=3, out=out, cache=False))
    await sim.run()
    most = Counter()
    for record in iter_chronicle(out):
        per_agent = Counter(w for e in record.events if not e.public for w in e.witnesses if w not in e.involved)
        most[record.round] = max(per_agent.values(), default=0)
    if attention is None:
        assert max(most.values()) > 1, "the crowd was not crowded: the test shows nothing"
    else:
        assert max(most.values()) <= attention
