"""What a kit world works out once per state and shares among every agent's perception (issue 37): a sealed
state's indexes, each feed from the ranked posts, a round's world parsed once, and genesis's trust in the world's
order."""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.worlds.kit import KitWorld, load_kit_file, social
from amphoreus_graph.worlds.kit.schema import FeedSpec
from amphoreus_graph.worlds.kit.state import KitState, Post
from amphoreus_graph.worlds.kit.texts import fmt, names_in

WORLDS = Path(__file__).parents[1] / "amphoreus_graph" / "worlds"


@pytest.fixture(scope="module")
def board() -> KitWorld:
    return load_kit_file(WORLDS / "chatter" / "chatter.yaml")


def crowded_fair(tmp_path: Path, agents: int) -> KitWorld:
    """The fair with its villagers cloned up to `agents` (as benchmarks/scale.py does)."""
    source = WORLDS / "fair" / "fair.yaml"
    spec = yaml.safe_load(source.read_text(encoding="utf-8"))
    originals = spec["agents"]
    spec["agents"] = [
        {k: v for k, v in originals[i % len(originals)].items() if k != "relationships"}
        | {"name": f"{originals[i % len(originals)]['name']} {i}"}
        for i in range(agents)
    ]
    for action in spec["actions"]:
        if "resolver" in action:
            action["resolver"] = str(source.parent / action["resolver"])
    spec.pop("seeds", None)
    path = tmp_path / "crowd.yaml"
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return load_kit_file(path)


def shown_by_definition(spec: FeedSpec, state: KitState, agent: str) -> list[str]:
    """A feed as docs/worlds-kit.md defines it, by looking at every post: recent ones by those the agent follows
    (everyone, without a follows relation) and replies to its own, its own only if `own`, ranked, cut to `size`."""
    row = state.relations.get(spec.follows or "", {}).get(agent, {})
    mine = {p.id for p in state.posts if p.author == agent}
    shown = [
        p
        for p in state.posts
        if state.round - p.round <= spec.window
        and (p.author != agent or spec.own)
        and (spec.follows is None or row.get(p.author, 0) > 0 or p.reply_to in mine or p.author == agent)
    ]
    number = {p.id: int(p.id.lstrip("#")) for p in shown}
    popular = spec.rank == "popular"
    shown.sort(key=lambda p: ((-p.popularity,) if popular else ()) + (-p.round, -number[p.id]))
    return [p.id for p in shown[: spec.size]]


def random_posts(state: KitState, names: list[str], rng: random.Random, count: int) -> None:
    for _ in range(count):
        earlier = [p.id for p in state.posts]
        state.posts.append(
            Post(
                id=state.new_id(),
                author=rng.choice(names),
                text="words",
                round=rng.randint(0, state.round),
                reply_to=rng.choice(earlier) if earlier and rng.random() < 0.4 else None,
                likes=rng.sample(names, rng.randint(0, 3)),
                reposts=rng.randint(0, 2),
            )
        )


@pytest.mark.parametrize("follows", [True, False])
@pytest.mark.parametrize("own", [False, True])
@pytest.mark.parametrize("rank", ["recent", "popular"])
def test_each_feed_is_what_the_definition_shows_however_it_is_found(board, follows, own, rank):
    declared = board.spec.feed
    assert declared is not None and declared.follows is not None
    spec = declared.model_copy(
        update={"own": own, "rank": rank, "size": 4, "follows": declared.follows if follows else None}
    )
    names = [a.name for a in board.spec.agents]
    rng = random.Random(f"{follows}{own}{rank}")
    for _ in range(20):
        state = KitState.model_validate(board.genesis(1))
        state.round = rng.randint(1, 6)
        random_posts(state, names, rng, rng.randint(0, 40))
        for a in names:
            for b in rng.sample(names, rng.randint(0, 3)):
                state.set_relation(declared.follows, a, b, rng.choice([1.0, 0.0, -1.0]))
        sealed = state.model_copy(deep=True).seal()
        for agent in names:
            expected = shown_by_definition(spec, state, agent)
            assert [p.id for p in social.feed(spec, state, agent)] == expected
            assert [p.id for p in social.feed(spec, sealed, agent)] == expected


def test_a_sealed_state_keeps_what_it_worked_out_and_its_copies_and_equality_do_not_see_it(board):
    state = KitState.model_validate(board.genesis(1))
    plain = state.model_copy(deep=True)
    built: list[int] = []
    state.seal()
    assert state.derived("k", lambda: built.append(1) or len(built)) == 1
    assert state.derived("k", lambda: built.append(1) or len(built)) == 1  # kept
    assert state == plain  # sealing is no part of the state
    copied = state.model_copy(deep=True)
    assert copied.derived("k", lambda: built.append(1) or len(built)) == 2  # a copy is worked out afresh
    assert plain.derived("k", lambda: built.append(1) or len(built)) == 3  # so is an unsealed state, each time
    first = state.present(state.agents[next(iter(state.agents))].at)
    first.clear()  # a caller's list is its own
    assert state.present(state.agents[next(iter(state.agents))].at)


def test_a_round_of_many_agents_parses_its_world_once_and_indexes_it_once(tmp_path, monkeypatch):
    world = crowded_fair(tmp_path, 240)
    framed, situations = world.frame(world.genesis(1), random.Random(7))
    parses: list[Any] = []
    places: list[Any] = []
    validate, by_place = KitState.model_validate, KitState._by_place
    monkeypatch.setattr(KitState, "model_validate", classmethod(lambda cls, v: parses.append(1) or validate(v)))
    monkeypatch.setattr(KitState, "_by_place", lambda self: places.append(1) or by_place(self))
    world.actors(framed)
    for agent in situations:
        world.memory_query(framed, agent, situations[agent])
        seen = world.perceive(framed, agent)
        assert len(seen.trust) == 239
    assert (len(parses), len(places)) == (0, 1)  # read when the round was framed; indexed on first asking
    world.perceive(copy.deepcopy(framed), next(iter(situations)))  # an equal dict: the same reading
    assert (len(parses), len(places)) == (0, 1)
    moved = copy.deepcopy(framed)
    walker = next(iter(situations))
    moved["agents"][walker]["at"] = "Old Orchard"
    assert world.perceive(moved, walker).location == "Old Orchard"  # a changed world is read afresh
    assert len(parses) == 1


def test_genesis_trust_is_what_each_agent_declares_in_the_worlds_order():
    world = load_kit_file(WORLDS / "fair" / "fair.yaml")
    trust = world.genesis(1)["trust"]
    order = [a.name for a in world.spec.agents]
    for agent in world.spec.agents:
        declared = {o: float(v) for o, v in agent.relationships.items() if v and o != agent.name}
        assert trust.get(agent.name, {}) == declared
        assert list(trust.get(agent.name, {})) == [o for o in order if o in declared]
    assert any(trust.values())


def test_a_text_composed_in_a_round_gets_the_society_counts_it_names():
    world = load_kit_file(WORLDS / "fair" / "fair.yaml")
    state = KitState.model_validate(world.genesis(1))
    state.agents[next(iter(state.agents))].fallen = True
    state.agents[next(iter(state.agents))].tally = 2.5
    full = world.rules.stakes_vars(state)
    assert (full["standing"], full["fallen"], full["tally"]) == (len(state.agents) - 1, 1, 2.5)
    for template in ("{standing} stand, {fallen} fell", "{tally:.{fallen}f} in all", "day {clock}"):
        named = world.rules.stakes_vars(state, template)
        assert fmt(template, named) == fmt(template, full)
    assert names_in("{tally:.{fallen}f} of {round}") == {"tally", "fallen", "round"}
    assert world.rules.stakes_vars(state, "day {clock}")["tally"] == 0  # not counted: the text does not say it
