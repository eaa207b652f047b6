"""A kit world that bounds sight (`sight: N`, worlds/kit/sight.py): in a crowd each agent notices N others where it
stands, names, targets and witnesses follow from that one relation, and a world without the bound is unchanged."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.worlds.kit import KitWorld, load_kit_file
from amphoreus_graph.worlds.kit.sight import noticed, watchers
from amphoreus_graph.worlds.kit.state import KitState
from tests.test_kit_sight import crowded_fair

SIGHT = 5


def with_sight(tmp_path: Path, agents: int, sight: int | None) -> KitWorld:
    world = crowded_fair(tmp_path, agents)
    if sight is None:
        return world
    path = tmp_path / "crowd.yaml"
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    spec["sight"] = sight
    path.write_text(yaml.safe_dump(spec), encoding="utf-8")
    return load_kit_file(path)


@pytest.fixture(scope="module")
def crowd(tmp_path_factory) -> tuple[KitWorld, KitState]:
    """60 villagers (about ten to a place) seeing 5 others each, as round 1 opens."""
    world = with_sight(tmp_path_factory.mktemp("sight"), 60, SIGHT)
    state, _ = world.frame(world.genesis(1), random.Random(3))
    return world, KitState.model_validate(state).seal()


def places(state: KitState) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for name, agent in state.agents.items():
        if agent.at is not None:
            out.setdefault(agent.at, []).append(name)
    return out


def test_each_agent_notices_sight_others_and_its_watchers_are_those_who_notice_it(crowd):
    _, state = crowd
    crowded = {p: names for p, names in places(state).items() if len(names) > SIGHT + 1}
    assert crowded, "the fixture must crowd some place"
    for place, names in crowded.items():
        seen = {a: noticed(state, a, place, SIGHT) for a in names}
        for agent in names:
            assert len(seen[agent]) == SIGHT and agent not in seen[agent]
            assert set(seen[agent]) <= set(names)
            by_definition = [b for b in names if agent in seen[b]]
            assert watchers(state, agent, place, SIGHT) == by_definition


def test_a_place_no_larger_than_sight_is_seen_whole_and_a_world_without_sight_is_unchanged(tmp_path, crowd):
    _, state = crowd
    for place, names in places(state).items():
        if len(names) <= SIGHT + 1:
            assert noticed(state, names[0], place, SIGHT) == names[1:]
    plain = with_sight(tmp_path, 60, None)
    raw, _ = plain.frame(plain.genesis(1), random.Random(3))
    plain_state = KitState.model_validate(raw)
    someone = next(iter(plain_state.agents))
    here = plain_state.agents[someone].at
    others = [n for n in plain_state.present(here) if n != someone]
    assert noticed(plain_state, someone, here, None) == others
    present = next(line for line in plain.perceive(raw, someone).observations if line.startswith("Present"))
    assert present == f"Present at {here}: {', '.join(others)}."


def test_the_prompt_names_whom_the_agent_notices_and_counts_the_rest(crowd):
    world, state = crowd
    raw = state.dump()
    agent = next(n for n, names in places(state).items() if len(names) > SIGHT + 1)
    agent = places(state)[agent][0]
    here = state.agents[agent].at
    seen = world.perceive(raw, agent)
    named = noticed(state, agent, here, SIGHT)
    rest = len(state.present(here)) - 1 - SIGHT
    assert f"Present at {here}: {', '.join(named)} and {rest} others." in seen.observations
    for option in seen.options:
        if option.action in ("chat", "gossip", "lend_a_hand"):
            assert set(option.targets) <= set(named), option.action
    trusted = {o for o, v in state.trust.get(agent, {}).items() if o != agent}
    assert set(seen.trust) == set(named) | trusted, "a trust row names whom it notices or trusts, not the society"


def test_an_agents_deed_is_witnessed_by_those_who_notice_it_and_an_unnoticed_target_is_refused(crowd):
    world, state = crowd
    raw = state.dump()
    place, names = next((p, n) for p, n in places(state).items() if len(n) > SIGHT + 1)
    actor = names[0]
    seen = noticed(state, actor, place, SIGHT)
    stranger = next(n for n in names if n != actor and n not in seen)
    friend = seen[0]
    decisions = {actor: Decision(action="chat", target=friend, speech="Fine weather for it.", rationale="")}
    now = Moment.of(state.cycle, state.round, world.rounds_per_cycle)
    done = world.resolve(raw, decisions, random.Random(1), now, world.rounds_per_cycle)
    (event,) = [e for e in done.events if e.id.endswith(actor)]
    assert set(event.witnesses) == {actor, friend, *watchers(state, actor, place, SIGHT)}
    assert len(event.witnesses) <= SIGHT + 2
    refused = world.resolve(
        raw,
        {actor: Decision(action="chat", target=stranger, speech="Hello.", rationale="")},
        random.Random(1),
        now,
        world.rounds_per_cycle,
    )
    assert not [e for e in refused.events if e.id.endswith(actor) and stranger in e.involved]


def test_whom_an_agent_notices_changes_from_round_to_round_and_replays_the_same(tmp_path):
    world = with_sight(tmp_path, 60, SIGHT)
    first, _ = world.frame(world.genesis(1), random.Random(3))
    second, _ = world.frame(first, random.Random(4))
    a, b = KitState.model_validate(first), KitState.model_validate(second)
    crowded = next(p for p, names in places(a).items() if len(names) > SIGHT + 1)
    agent = places(a)[crowded][0]
    assert noticed(a, agent, crowded, SIGHT) == noticed(KitState.model_validate(first), agent, crowded, SIGHT)
    rounds = [noticed(s, agent, s.agents[agent].at, SIGHT) for s in (a, b) if s.agents[agent].at == crowded]
    assert len(rounds) == 2 and rounds[0] != rounds[1]
