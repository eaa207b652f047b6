"""The rules kit: worlds declared in YAML, driven here through the `World` methods alone (frame → perceive →
decide → resolve, until an outcome), as the engine will drive them.

The acceptance world is tests/worlds/isles (YAML only): four isles joined by lanes with travel times, beacons
lit in place that rivals put out, a contested claim settled by insight, a bell to carry home, and a fog from
0 to 12 whose thresholds close a lane (6), make rowing cost health (6), silence signals (9) and end it (12).
"""

from __future__ import annotations

import copy
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.contracts.turn import Decision, TurnContext
from amphoreus_graph.contracts.world import World
from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.worlds.kit import ENGINE_KEYS, KitWorld, load_kit_file, load_kit_world
from amphoreus_graph.worlds.kit.state import KitState

HERE = Path(__file__).parent
ISLES = HERE / "worlds" / "isles" / "isles.yaml"
WORLDS = HERE.parent / "amphoreus_graph" / "worlds"
SHIPPED = {name: WORLDS / name / f"{name}.yaml" for name in ("fair", "fishery", "markettown", "election")}
WITH_SEEDS = SHIPPED | {"chatter": WORLDS / "chatter" / "chatter.yaml"}  # the board: 8 rounds, 12 neighbours
FORBIDDEN = re.compile(
    r"amphoreus|chrysos|coreflame|titan|black tide|lycurgus|vortex|flame-chase|era nova|okhema|\bheirs?\b", re.I
)
LANES = {  # the isles' declared edges, as (from, to) pairs (Gull Rock -> Far Skerry is one way)
    ("Harbour", "Gull Rock"),
    ("Gull Rock", "Harbour"),
    ("Harbour", "Low Key"),
    ("Low Key", "Harbour"),
    ("Low Key", "Far Skerry"),
    ("Far Skerry", "Low Key"),
    ("Gull Rock", "Far Skerry"),
}


# ------------------------------------------------------------------------------------------------ helpers


def isles_raw() -> dict[str, Any]:
    return yaml.safe_load(ISLES.read_text(encoding="utf-8"))


def build(raw: dict[str, Any], source: Path = ISLES) -> KitWorld:
    return load_kit_world({k: v for k, v in raw.items() if k not in ENGINE_KEYS}, source)


@pytest.fixture(scope="module")
def isles() -> KitWorld:
    return load_kit_file(ISLES)


def state_with(world: KitWorld, **changes: Any) -> dict[str, Any]:
    """Genesis of cycle 1 at round 1 (as if framed), with top-level keys replaced and `at`/`stats` per agent
    changed: state_with(w, clock=5, agents={"Ana": {"at": "Low Key"}})."""
    state = copy.deepcopy(world.genesis(1))
    state["round"] = 1
    for agent, fields in changes.pop("agents", {}).items():
        for key, value in fields.items():
            if key == "stats":
                state["agents"][agent]["stats"].update(value)
            else:
                state["agents"][agent][key] = value
    for name, fields in changes.pop("objectives", {}).items():
        state["objectives"][name] = fields
    state.update(changes)
    return state


def resolve(world: KitWorld, state: dict[str, Any], decisions: dict[str, Decision], seed: int = 0, limit: int = 10):
    now = Moment.of(state["cycle"], state["round"], world.rounds_per_cycle)
    return world.resolve(state, decisions, random.Random(seed), now, limit)


def obj(state: dict[str, Any], name: str) -> dict[str, Any]:
    """An objective's state with the defaults a compact state leaves out."""
    return {"status": "free", "at": None, "by": None} | state["objectives"][name]


def d(action: str, target: str | None = None, speech: str = "") -> Decision:
    return Decision(action=action, target=target, speech=speech)


def turn_for(world: KitWorld, state: dict[str, Any], agent: str) -> TurnContext:
    seen = world.perceive(state, agent)
    profile = next(a for a in world.agents if a.name == agent)
    return TurnContext(
        run_id="t",
        seed=0,
        cycle=state["cycle"],
        round=state["round"],
        agent=agent,
        path=profile.path,
        location=seen.location,
        status=seen.status,
        observations=seen.observations,
        options=seen.options,
        pressures=seen.pressures,
        aim=seen.aim,
        aim_target=seen.aim_target,
        trust=seen.trust,
    )


def pressing(world: KitWorld, state: dict[str, Any], agent: str, rng: random.Random) -> Decision:
    """A simple deterministic chooser: the most pressing option (ties: offer order), aimed at the aim."""
    seen = world.perceive(state, agent)
    best = max(seen.options, key=lambda o: (seen.pressures.get(o.action, 0.0), -seen.options.index(o)))
    target = seen.aim_target if seen.aim_target in best.targets else (best.targets[0] if best.targets else None)
    return d(best.action, target, speech=f"I will {best.action.replace('_', ' ')}.")


def random_choice(world: KitWorld, state: dict[str, Any], agent: str, rng: random.Random) -> Decision:
    option = rng.choice(world.perceive(state, agent).options)
    return d(option.action, rng.choice(option.targets) if option.targets else None)


def play(world: KitWorld, chooser=pressing, seed: int = 0, limit: int | None = None, cycle: int = 1):
    """Frame → perceive → decide → resolve until an outcome; returns (states, situations, perceptions, events)."""
    rng = random.Random(seed)
    limit = limit or world.rounds_per_cycle
    state = world.genesis(cycle)
    states, situations, seen, events = [state], [], [], []
    for _ in range(limit + 1):
        state, framed = world.frame(state, rng)
        situations.append(framed)
        decisions = {}
        for agent in world.actors(state):
            seen.append((state, agent, world.perceive(state, agent)))
            decisions[agent] = chooser(world, state, agent, rng)
        result = world.resolve(state, decisions, rng, Moment.of(cycle, state["round"], limit), limit)
        state = result.state
        states.append(state)
        events += result.events
        if world.outcome(state):
            return states, situations, seen, events
    raise AssertionError("the cycle never ended")


def texts_of(world: KitWorld, run) -> list[str]:
    """Every text a run produced: situations, events, perceptions, views, the end."""
    states, situations, seen, events = run
    out = [t for framed in situations for t in framed.values()]
    out += [e.text for e in events]
    for _, _, p in seen:
        out += [p.aim, *p.observations, *p.status.keys(), *p.status.values()]
        out += [o.help + " " + o.verb for o in p.options]
    out += [world.view(s).model_dump_json() for s in states]
    out.append(world.end(states[-1]).model_dump_json())
    return out


# ------------------------------------------------------------------------------------------- the isles


def test_a_yaml_only_world_is_a_world_and_loads_through_the_scenario_loader(isles):
    assert isinstance(isles, World)
    scenario = load_scenario(str(ISLES))
    assert scenario.name == "isles" and scenario.agent_names == ["Ana", "Bram", "Cleo", "Dov", "Esk"]
    assert set(isles.actions) >= {"row", "light", "douse", "dive", "hang_bell", "strike", "signal"}
    assert isles.actions["row"].reach.value == "edge" and isles.actions["light"].tags == ["creation"]
    state = isles.genesis(1)
    assert state["cycle"] == 1 and state["round"] == 0 and state["clock"] == 2


def test_options_offer_moves_only_along_open_edges(isles):
    checked = 0
    for seed in range(6):
        for state, agent, seen in play(isles, random_choice, seed=seed)[2]:
            here = seen.location
            for option in seen.options:
                if option.action != "row":
                    continue
                for target in option.targets:
                    assert (here, target) in LANES, f"{agent} offered {here} -> {target}"
                    checked += 1
                if here == "Far Skerry":
                    assert "Gull Rock" not in option.targets  # the one-way lane runs the other way
                if state["clock"] >= 6 and here == "Low Key":
                    assert "Far Skerry" not in option.targets  # closed by the fog
    assert checked > 50


def test_a_move_along_no_edge_is_rejected_and_critiqued(isles):
    state = state_with(isles)
    result = resolve(isles, state, {"Ana": d("row", "Far Skerry", speech="Off I go.")})
    assert result.state["agents"]["Ana"]["at"] == "Harbour"
    (event,) = [e for e in result.events if e.id == "c1-r1-Ana"]
    assert "could not row: no way leads from Harbour to Far Skerry" in event.text and event.importance == 1
    assert isles.problem(state, "Ana", d("row", "Far Skerry")) == "no way leads from Harbour to Far Skerry"
    critiques = isles.critique(turn_for(isles, state, "Ana"), d("row", "Far Skerry"))
    assert critiques and critiques[0].cost >= 0.9 and "along no edge" in critiques[0].reason
    fine = isles.critique(turn_for(isles, state, "Ana"), d("row", "Gull Rock"))
    assert fine == []


def test_a_closed_lane_is_critiqued_as_closed_not_as_missing(isles):
    state = state_with(isles, clock=6.0, active=["clock>=6"], agents={"Cleo": {"at": "Low Key"}})
    critiques = isles.critique(turn_for(isles, state, "Cleo"), d("row", "Far Skerry"))
    assert [c.reason for c in critiques] == ["the way from Low Key to Far Skerry is not open now"]


def test_a_long_lane_puts_the_agent_en_route_until_it_arrives(isles):
    state = state_with(isles)
    first = resolve(isles, state, {"Cleo": d("row", "Far Skerry")})
    cleo = first.state["agents"]["Cleo"]
    assert cleo["at"] is None and cleo["to"] == "Far Skerry" and cleo["arrives"] == 2
    assert "Cleo" not in isles.actors(first.state)
    assert any("Cleo is on the way to Far Skerry." in o for o in isles.perceive(first.state, "Dov").observations)
    assert isles.view(first.state).agents["Cleo"].location == "en route to Far Skerry"
    framed, situations = isles.frame(first.state, random.Random(0))
    assert "Cleo" not in situations
    second = resolve(isles, framed, {"Dov": d("rest")})
    assert second.state["agents"]["Cleo"]["at"] == "Far Skerry"
    arrival = next(e for e in second.events if e.id == "c1-r2-Cleo")
    assert arrival.text == "At Far Skerry, Cleo arrived." and "Esk" in arrival.witnesses
    assert "Cleo" in isles.actors(second.state)


def test_a_one_round_lane_arrives_at_once_and_a_lane_with_no_edges_declared_is_one_round(isles):
    state = state_with(isles)
    moved = resolve(isles, state, {"Ana": d("row", "Gull Rock")}).state
    assert moved["agents"]["Ana"]["at"] == "Gull Rock" and "Ana" in isles.actors(moved)
    raw = isles_raw()
    del raw["edges"]
    raw["clock"]["thresholds"][0]["close"] = [["Harbour", "Far Skerry"]]
    open_world = build(raw)
    options = {o.action: o.targets for o in open_world.perceive(state_with(open_world), "Ana").options}
    assert options["row"] == ["Gull Rock", "Low Key", "Far Skerry"]
    far = resolve(open_world, state_with(open_world), {"Ana": d("row", "Far Skerry")}).state
    assert far["agents"]["Ana"]["at"] == "Far Skerry"


def test_agents_act_only_where_they_stand(isles):
    state = state_with(isles)
    for agent in ("Ana", "Bram", "Cleo", "Dov", "Esk"):
        seen = isles.perceive(state, agent)
        here = seen.location
        options = {o.action: o.targets for o in seen.options}
        for beacon in options.get("light", []):
            assert isles.view(state).objectives[beacon].endswith(f"at {here}")
        for other in options.get("strike", []):
            assert state["agents"][other]["at"] == here
    result = resolve(isles, state, {"Ana": d("strike", "Esk"), "Bram": d("light", "East Beacon")})
    assert result.state["agents"]["Esk"]["stats"]["health"] == 10
    assert result.state["objectives"]["East Beacon"].get("status", "free") == "free"
    texts = {e.id: e.text for e in result.events}
    assert "Esk is not at Harbour" in texts["c1-r1-Ana"]
    assert "the East Beacon is not at Harbour" in texts["c1-r1-Bram"]
    turn = turn_for(isles, state, "Ana")
    assert isles.critique(turn, d("strike", "Esk"))[0].reason == "acts on Esk, who is not at Harbour"
    bram = turn_for(isles, state, "Bram")
    assert (
        isles.critique(bram, d("light", "East Beacon"))[0].reason == "acts on the East Beacon, which is not at Harbour"
    )


def test_fog_thresholds_fire_at_their_declared_values(isles):
    # At 5 the lane is open and rowing is free; one round later the fog stands at 6.
    before = state_with(isles, clock=5.0, agents={"Ana": {"at": "Low Key"}})
    row_targets = isles.perceive(before, "Cleo").options[0].targets
    assert "Far Skerry" in row_targets
    after = resolve(isles, before, {"Ana": d("row", "Harbour"), "Cleo": d("rest")})
    state = after.state
    assert state["clock"] == 6 and state["active"] == ["clock>=6"]
    fired = [e for e in after.events if e.public and "fog thickens to 6 of 12" in e.text]
    assert len(fired) == 1 and set(fired[0].witnesses) == {"Ana", "Bram", "Cleo", "Dov", "Esk"}
    assert state["agents"]["Ana"]["stats"]["health"] == 10  # the cost came in force after Ana rowed
    cleo = {o.action: o.targets for o in isles.perceive(state, "Cleo").options}
    assert cleo["row"] == ["Harbour"]  # the lane to Far Skerry has closed
    state["round"] = 2
    rowed = resolve(isles, state, {"Cleo": d("row", "Harbour")}).state
    assert rowed["agents"]["Cleo"]["stats"]["health"] == 9  # rowing now costs 1 health
    assert isles.critique(turn_for(isles, state, "Cleo"), d("row", "Far Skerry"))[0].cost == 0.6
    # At 9 signals are no longer offered; a forced one is rejected.
    nine = state_with(isles, clock=8.0, active=["clock>=6"])
    ninth = resolve(isles, nine, {"Ana": d("signal")}).state
    assert ninth["clock"] == 8  # the signal (-1) and the round's rise (+1) cancel out
    nine = state_with(isles, clock=8.0, active=["clock>=6"])
    ninth = resolve(isles, nine, {"Ana": d("rest")}).state
    assert ninth["clock"] == 9 and "clock>=9" in ninth["active"]
    assert "signal" not in [o.action for o in isles.perceive(ninth, "Ana").options]
    assert "not possible any more" in isles.problem(ninth, "Ana", d("signal"))
    # At 12 the fog ends the cycle with its declared ending and score.
    last = state_with(isles, clock=11.0, active=["clock>=6", "clock>=9"])
    end_state = resolve(isles, last, {"Ana": d("rest")}).state
    assert end_state["clock"] == 12 and isles.outcome(end_state) == "fogbound"
    end = isles.end(end_state)
    assert end.text == "The fog rose to 12 and swallowed the isles with 0 beacons burning."
    assert end.score == -1.0  # score: lit × 1 + delivered × 2 − 1 × fog share (12 of 12)


def test_a_threshold_that_falls_back_stops_holding_and_the_lane_reopens(isles):
    state = state_with(isles, clock=6.0, active=["clock>=6"], agents={"Ana": {"at": "Low Key"}})
    back = resolve(isles, state, {"Ana": d("signal"), "Cleo": d("signal")}).state
    assert back["clock"] == 5 and back.get("active", []) == []
    assert "Far Skerry" in {o.action: o.targets for o in isles.perceive(back, "Cleo").options}["row"]


@pytest.mark.parametrize(
    ("rule", "stat", "winner"),
    [("highest_stat", "insight", "Cleo"), ("first", None, "Cleo"), ("nobody", None, None)],
)
def test_contested_claims_resolve_by_the_declared_rule(rule, stat, winner):
    raw = isles_raw()
    raw["objective_kinds"]["beacon"]["contest"] = rule
    raw["objective_kinds"]["beacon"]["contest_stat"] = stat
    world = build(raw)
    state = state_with(world, agents={"Dov": {"stats": {"insight": 1.0}}})
    result = resolve(world, state, {"Dov": d("light", "East Beacon"), "Cleo": d("light", "East Beacon")})
    beacon = result.state["objectives"]["East Beacon"]
    assert beacon.get("status", "free") == ("lit" if winner else "free")
    assert beacon.get("by") == winner
    texts = {e.id: e.text for e in result.events}
    loser = {"Cleo": "Dov", None: None}[winner]
    if loser:
        assert texts[f"c1-r1-{loser}"] == f"At Low Key, {loser} reached the East Beacon too, but {winner} lit it first."
        assert texts[f"c1-r1-{winner}"] == f"At Low Key, {winner} lit the East Beacon."
    else:
        assert "but nobody lit it first" in texts["c1-r1-Cleo"] and "but nobody lit it first" in texts["c1-r1-Dov"]


def test_a_contest_by_highest_stat_goes_to_the_higher_stat_whoever_comes_first(isles):
    state = state_with(isles, agents={"Dov": {"stats": {"insight": 5.0}}})
    result = resolve(isles, state, {"Cleo": d("light", "East Beacon"), "Dov": d("light", "East Beacon")})
    assert result.state["objectives"]["East Beacon"]["by"] == "Dov"


def test_a_random_contest_follows_the_seed():
    raw = isles_raw()
    raw["objective_kinds"]["beacon"]["contest"] = "random"
    world = build(raw)
    winners = set()
    for seed in range(12):
        state = state_with(world)
        result = resolve(world, state, {"Cleo": d("light", "East Beacon"), "Dov": d("light", "East Beacon")}, seed)
        again = resolve(world, state, {"Cleo": d("light", "East Beacon"), "Dov": d("light", "East Beacon")}, seed)
        assert result.state == again.state
        winners.add(result.state["objectives"]["East Beacon"]["by"])
    assert winners == {"Cleo", "Dov"}


def test_beacons_lit_in_place_are_put_out_by_rivals_and_relit(isles):
    state = state_with(isles, agents={"Bram": {"at": "Low Key"}})
    lit = resolve(isles, state, {"Cleo": d("light", "East Beacon")})
    assert obj(lit.state, "East Beacon") == {"status": "lit", "at": "Low Key", "by": "Cleo"}
    assert lit.state["clock"] == 2  # lit: −1, the round's rise: +1
    event = next(e for e in lit.events if e.id == "c1-r1-Cleo")
    assert event.public and event.importance == 4 + 3 and event.tags == ["creation"]
    assert lit.state["agents"]["Cleo"]["stats"]["oil"] == 1 and lit.state["agents"]["Cleo"]["tally"] == 1
    state = dict(lit.state, round=2)
    doused = resolve(isles, state, {"Bram": d("douse", "East Beacon", speech="No more lights.")})
    assert obj(doused.state, "East Beacon") == {"status": "doused", "at": "Low Key", "by": None}
    assert doused.state["clock"] == 5  # doused: +2, the round's rise: +1
    assert doused.state["trust"]["Cleo"]["Bram"] == -0.5
    text = next(e for e in doused.events if e.id == "c1-r2-Bram").text
    assert text == 'At Low Key, Bram put out the East Beacon that Cleo had lit. Bram said: "No more lights."'
    assert any("The East Beacon is here: put out." in o for o in isles.perceive(doused.state, "Cleo").observations)
    state = dict(doused.state, round=3)
    relit = resolve(isles, state, {"Cleo": d("light", "East Beacon")})
    assert relit.state["objectives"]["East Beacon"]["status"] == "lit"
    assert "Cleo lit the East Beacon again." in next(e for e in relit.events if e.id == "c1-r3-Cleo").text


def test_the_bell_is_claimed_by_chance_carried_taken_from_the_fallen_and_delivered(isles):
    outcomes = set()
    for seed in range(10):
        state = state_with(isles, agents={"Esk": {"stats": {"insight": 0.0}}})
        result = resolve(isles, state, {"Esk": d("dive", "Sunken Bell")}, seed=seed)
        outcomes.add(result.state["objectives"]["Sunken Bell"].get("status", "free"))
    assert outcomes == {"free", "held"}  # a 50% chance: some dives fail, some succeed
    sure = state_with(isles, agents={"Esk": {"stats": {"insight": 5.0}}})
    held = resolve(isles, sure, {"Esk": d("dive", "Sunken Bell")}).state
    assert obj(held, "Sunken Bell") == {"status": "held", "at": None, "by": "Esk"}
    assert isles.perceive(held, "Esk").status["carrying"] == "Sunken Bell"
    assert "hang_bell" not in [o.action for o in isles.perceive(held, "Esk").options]  # not at the Harbour
    # Struck down while carrying it, Esk loses the bell to the striker (on_fall: taken).
    held = dict(held, round=2)
    held["agents"]["Esk"]["stats"]["health"] = 3.0
    held["agents"]["Ana"]["at"] = "Far Skerry"
    struck = resolve(isles, held, {"Ana": d("strike", "Esk")})
    assert struck.state["agents"]["Esk"]["fallen"] is True
    assert struck.state["objectives"]["Sunken Bell"]["by"] == "Ana"
    text = next(e for e in struck.events if e.id == "c1-r2-Ana").text
    assert text == "At Far Skerry, Ana struck Esk, dealing 3 harm. Esk fell. Ana took the Sunken Bell from Esk."
    assert "Esk" not in isles.actors(struck.state)
    home = dict(struck.state, round=3)
    home["agents"]["Ana"]["at"] = "Harbour"
    delivered = resolve(isles, home, {"Ana": d("hang_bell")})
    assert obj(delivered.state, "Sunken Bell") == {"status": "delivered", "at": "Harbour", "by": "Ana"}
    event = next(e for e in delivered.events if e.id == "c1-r3-Ana")
    assert event.text == "At Harbour, Ana hung the Sunken Bell at Harbour." and event.public
    assert delivered.state["agents"]["Ana"]["tally"] == 2


def test_a_shield_halves_harm_and_alliances_returned_bind_twice_as_strongly(isles):
    state = state_with(isles, agents={"Dov": {"at": "Low Key"}})
    result = resolve(isles, state, {"Dov": d("strike", "Cleo"), "Cleo": d("guard", "Cleo")})
    assert result.state["agents"]["Cleo"]["stats"]["health"] == 8
    assert "Cleo stood guard over themself." in next(e.text for e in result.events if e.id == "c1-r1-Cleo")
    assert result.state["trust"]["Cleo"]["Dov"] == -0.4
    mutual = resolve(isles, state, {"Dov": d("ally", "Cleo"), "Cleo": d("ally", "Dov")}).state
    one_way = resolve(isles, state, {"Dov": d("ally", "Cleo")}).state
    assert mutual["trust"]["Cleo"]["Dov"] == 0.6 and mutual["trust"]["Dov"]["Cleo"] == 0.6
    assert one_way["trust"]["Cleo"]["Dov"] == 0.15 and one_way["trust"]["Dov"]["Cleo"] == 0.15


def test_the_clock_keeps_its_own_scale(isles):
    for seed in range(3):
        run = play(isles, random_choice, seed=seed)
        states = run[0]
        assert all(0 <= s["clock"] <= 12 for s in states)
        for _, _, seen in run[2]:
            shown = seen.status["fog"]
            assert re.fullmatch(r"\d+(\.\d+)?/12", shown)
        for view in (isles.view(s) for s in states):
            assert [(g.name, g.low, g.high) for g in view.gauges] == [("fog", 0, 12)]
        for text in texts_of(isles, run):
            assert "/100" not in text and "100" not in text


def test_all_beacons_burning_ends_the_cycle_with_dawn_and_its_score(isles):
    lit = {"status": "lit", "at": "Far Skerry", "by": "Esk"}
    state = state_with(
        isles,
        objectives={"West Beacon": lit, "North Beacon": {"status": "lit", "at": "Gull Rock", "by": "Bram"}},
    )
    result = resolve(isles, state, {"Cleo": d("light", "East Beacon")})
    assert isles.outcome(result.state) == "dawn"
    end = isles.end(result.state)
    assert end.outcome == "dawn" and end.text.startswith("All three beacons burned at once")
    assert end.score == 5 + 3  # the ending's own score: base 5 + lit × 1
    assert end.tally == {"Ana": 0, "Bram": 0, "Cleo": 1, "Dov": 0, "Esk": 0}
    assert isles.view(result.state).score["Cleo"] == 1 and end.facts["lit"] == 3


def test_the_round_limit_ends_with_its_declared_ending_and_everyone_fallen_with_theirs(isles):
    states = play(isles, lambda w, s, a, r: d("rest"), seed=1, limit=3)[0]
    end = isles.end(states[-1])
    assert states[-1]["round"] == 3 and end.outcome == "long_night"
    assert end.text == "The night ran its 3 rounds; beacons still burning: 0 of 3."
    assert end.score == pytest.approx(-5 / 12, abs=1e-3)  # no beacon lit or bell hung; the fog at 5 of 12
    state = state_with(isles, agents={n: {"at": "Low Key", "stats": {"health": 1.0}} for n in ("Cleo", "Dov")})
    for name in ("Ana", "Bram", "Esk"):
        state["agents"][name]["fallen"] = True
    fallen = resolve(isles, state, {"Cleo": d("strike", "Dov"), "Dov": d("strike", "Cleo")}).state
    assert isles.outcome(fallen) == "lost_keepers" and isles.end(fallen).score == -5


def test_the_pressing_chooser_plays_the_isles_to_an_outcome_that_lights_beacons(isles):
    states, _, _, events = play(isles, pressing, seed=0)
    final = states[-1]
    assert isles.outcome(final) is not None
    assert any(o.get("status") == "lit" for o in final["objectives"].values())
    ids = [e.id for e in events]
    assert len(ids) == len(set(ids))


def test_perception_says_the_world_in_its_own_words(isles):
    state = state_with(isles)
    seen = isles.perceive(state, "Cleo")
    assert seen.location == "Low Key" and seen.aim == "the East Beacon on Low Key, burning"
    assert seen.aim_target == "East Beacon"
    assert seen.status == {"health": "10/10", "oil": "2/5", "insight": "3/5", "carrying": "nothing", "fog": "2/12"}
    assert "Present at Low Key: Dov." in seen.observations
    assert "The East Beacon is here: dark." in seen.observations
    assert "Open ways from here: Harbour (1 round), Far Skerry (2 rounds)." in seen.observations
    ana = isles.perceive(state, "Ana")
    assert ana.aim_target == "Gull Rock"  # the next step of the quickest route to her beacon
    assert isles.memory_query(state, "Ana", "Fog drifts over Harbour. The rest.") == (
        "Fog drifts over Harbour. Ana is at Harbour. Ana seeks the North Beacon on Gull Rock, burning."
    )
    assert {"Harbour", "North Beacon", "fog", "Ana", "beacon"} <= isles.vocabulary()


def test_pressures_lie_in_range_and_urge_what_the_state_calls_for(isles):
    state = state_with(isles)
    cleo = isles.perceive(state, "Cleo").pressures
    assert cleo["light"] == 0.8  # a claim on the beacon it seeks, where it stands
    held = state_with(
        isles,
        objectives={"Sunken Bell": {"status": "held", "at": None, "by": "Ana"}},
        agents={"Ana": {"stats": {"health": 2.0}}},
    )
    ana = isles.perceive(held, "Ana").pressures
    assert ana["hang_bell"] >= 0.8 and ana["rest"] >= 0.7  # deliver what you hold; rest when badly hurt
    late = state_with(isles, clock=8.0, active=["clock>=6"])
    assert isles.perceive(late, "Ana").pressures["signal"] > isles.perceive(state, "Ana").pressures["signal"]
    for seed in range(3):
        for _, _, seen in play(isles, random_choice, seed=seed)[2]:
            assert all(-1 <= v <= 1 for v in seen.pressures.values())
            assert set(seen.pressures) <= {o.action for o in seen.options}


def test_events_name_their_place_speech_witnesses_and_ids(isles):
    state = state_with(isles, agents={"Dov": {"at": "Harbour"}})
    result = resolve(isles, state, {"Ana": d("rest", speech="A quiet day."), "Dov": d("study")})
    ana, dov = (next(e for e in result.events if e.id == f"c1-r1-{n}") for n in ("Ana", "Dov"))
    assert ana.text == 'At Harbour, Ana rested. Ana said: "A quiet day."' and ana.kind == "speech"
    assert set(ana.witnesses) == {"Ana", "Bram", "Dov"} and ana.involved == ["Ana"]
    assert ana.action == "rest" and ana.tags == ["withdrawal"] and ana.tick == 1
    assert dov.kind == "observation" and dov.importance == 2


def test_same_seed_same_events_and_resolve_never_changes_its_input(isles):
    first = play(isles, random_choice, seed=11)
    second = play(isles, random_choice, seed=11)
    assert [e.model_dump() for e in first[3]] == [e.model_dump() for e in second[3]]
    assert first[0] == second[0]
    other = play(isles, random_choice, seed=12)
    assert [e.text for e in other[3]] != [e.text for e in first[3]]
    state = state_with(isles, agents={"Bram": {"at": "Low Key"}})
    frozen = copy.deepcopy(state)
    decisions = {"Bram": d("strike", "Cleo"), "Cleo": d("light", "East Beacon"), "Ana": d("row", "Gull Rock")}
    one = resolve(isles, state, decisions, seed=4)
    two = resolve(isles, state, decisions, seed=4)
    assert state == frozen and one.state == two.state
    assert [e.model_dump() for e in one.events] == [e.model_dump() for e in two.events]
    framed = isles.frame(state, random.Random(1))
    assert state == frozen and framed == isles.frame(state, random.Random(1))


def test_states_are_compact_json(isles):
    import json

    for state in play(isles, random_choice, seed=2)[0]:
        text = json.dumps(state)
        assert json.loads(text) == state and len(text) < 2000


# --------------------------------------------------------------------------------------- malformed YAML


def _edit(path: str, value: Any, *, delete: bool = False):
    def apply(raw: dict[str, Any]) -> None:
        parts = path.split(".")
        node: Any = raw
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        last = parts[-1]
        key: Any = int(last) if isinstance(node, list) else True if last == "True" else last
        if delete:
            del node[key]
        elif isinstance(node, list) and key == len(node):
            node.append(value)
        else:
            node[key] = value

    return apply


MALFORMED = [
    ("an unknown top-level field", _edit("colour", "blue"), "colour: Extra inputs are not permitted"),
    (
        "an edge to an unknown place",
        _edit("edges.0.between", ["Harbour", "Atlantis"]),
        "edges[0].between[1]: unknown location 'Atlantis'",
    ),
    ("an edge from a place to itself", _edit("edges.0.between", ["Harbour", "Harbour"]), "edges[0].between:"),
    (
        "an edge with three ends",
        _edit("edges.0.between", ["Harbour", "Low Key", "Gull Rock"]),
        "edges[0].between: List should have at most 2 items",
    ),
    (
        "two edges along the same way",
        _edit("edges.1.between", ["Gull Rock", "Harbour"]),
        "edges[1]: a second edge from 'Gull Rock' to 'Harbour'",
    ),
    ("a travel time of zero", _edit("edges.2.time", 0), "edges[2].time: Input should be greater than or equal to 1"),
    (
        "an effect naming an unknown objective",
        _edit("actions.1.effects", [{"claim": "Moon Beacon"}]),
        "actions[1].effects[0].claim.objective: unknown objective 'Moon Beacon'",
    ),
    (
        "an unknown effect",
        _edit("actions.13", {"name": "sing", "effects": [{"sing": 2}]}),
        "actions[13].effects[0]: expected one effect: a mapping with one key from [move, claim",
    ),
    (
        "an effect with two keys",
        _edit("actions.11.effects", [{"heal": 1, "harm": 1}]),
        "actions[11].effects[0]: expected one effect",
    ),
    (
        "an effect amount of the wrong type",
        _edit("actions.5.effects.0", {"harm": "lots"}),
        "actions[5].effects[0].harm.amount: Value error, unknown name 'lots'",
    ),
    (
        "an unknown effect argument",
        _edit("actions.5.effects.0", {"harm": {"amount": 2, "force": 9}}),
        "actions[5].effects[0].harm.force: Extra inputs are not permitted",
    ),
    (
        "a threshold outside the clock's range",
        _edit("clock.thresholds.0.at", 60),
        "clock.thresholds[0].at: 60 is outside the range [0, 12]",
    ),
    (
        "a threshold closing a lane that does not exist",
        _edit("clock.thresholds.0.close", [["Harbour", "Far Skerry"]]),
        "clock.thresholds[0].close[0]: no edge between 'Harbour' and 'Far Skerry'",
    ),
    (
        "a threshold cost for an unknown action",
        _edit("clock.thresholds.0.costs", {"swim": {"health": 1}}),
        "clock.thresholds[0].costs.swim: unknown action 'swim'",
    ),
    (
        "a threshold cost in an unknown stat",
        _edit("clock.thresholds.0.costs", {"row": {"luck": 1}}),
        "clock.thresholds[0].costs.row.luck: unknown stat 'luck'",
    ),
    (
        "a threshold forbidding an unknown action",
        _edit("clock.thresholds.1.forbid", ["shout"]),
        "clock.thresholds[1].forbid[0]: unknown action 'shout'",
    ),
    (
        "a threshold ending with an undeclared outcome",
        _edit("clock.thresholds.2.end", "doom"),
        "clock.thresholds[2].end: unknown ending 'doom'",
    ),
    (
        "a threshold effect that needs an actor",
        _edit("clock.thresholds.0.effects", [{"harm": {"amount": 1}}]),
        "clock.thresholds[0].effects[0].harm.who: 'target'; a threshold has no actor",
    ),
    (
        "a clock starting outside its range",
        _edit("clock.start", 13),
        "clock: Value error, start (13.0) must lie in [min, max] = [0.0, 12.0]",
    ),
    (
        "a clock rise for an unknown action",
        _edit("clock.on_action", {"sing": 1}),
        "clock.on_action.sing: unknown action 'sing'",
    ),
    (
        "a clock rise for an unknown transition",
        _edit("clock.on_transition", {"exploded": 1}),
        "clock.on_transition.exploded",
    ),
    (
        "a relationship to an unknown agent",
        _edit("agents.0.relationships", {"Zed": 0.5}),
        "agents[0].relationships.Zed: unknown agent 'Zed'",
    ),
    (
        "a relationship to oneself",
        _edit("agents.0.relationships", {"Ana": 0.5}),
        "agents[0].relationships.Ana: unknown agent 'Ana'",
    ),
    (
        "trust outside [-1, 1]",
        _edit("agents.0.relationships", {"Cleo": 3}),
        "agents[0].relationships: Value error, trust must lie in [-1, 1]",
    ),
    (
        "duplicate location names",
        _edit("locations.1.name", "Harbour"),
        "locations: duplicate location names ['Harbour']",
    ),
    ("duplicate agent names", _edit("agents.1.name", "Ana"), "agents: duplicate agent names ['Ana']"),
    ("duplicate action names", _edit("actions.1.name", "row"), "actions: duplicate action names ['row']"),
    ("duplicate objective names", _edit("objectives.1.name", "North Beacon"), "objectives: duplicate objective names"),
    ("duplicate ending ids", _edit("endings.1.id", "dawn"), "endings: duplicate ending names ['dawn']"),
    ("an unknown tag", _edit("actions.0.tags", ["sailing"]), "actions[0].tags[0]: unknown tag 'sailing'"),
    ("an agent starting nowhere", _edit("agents.2.start", "Moon"), "agents[2].start: unknown location 'Moon'"),
    ("an agent without a Path", _edit("agents.0.path", None, delete=True), "agents[0].path: Field required"),
    (
        "an agent seeking an unknown objective",
        _edit("agents.0.seeks", "Lamp"),
        "agents[0].seeks: unknown objective 'Lamp'",
    ),
    (
        "an agent's stat outside its range",
        _edit("agents.2.stats", {"insight": 9}),
        "agents[2].stats.insight: 9 is outside [0, 5]",
    ),
    ("an agent's unknown stat", _edit("agents.2.stats", {"luck": 1}), "agents[2].stats.luck: unknown stat 'luck'"),
    ("a name with '#'", _edit("agents.0.name", "Ana#2"), "agents[0].name: 'Ana#2'; expected a name without '#'"),
    (
        "a stat starting above its max",
        _edit("stats.oil.start", 9),
        "stats.oil: Value error, start (9.0) must lie in [min, max]",
    ),
    ("two vital stats", _edit("stats.oil.vital", True), "stats: more than one vital stat"),
    (
        "an objective at an unknown place",
        _edit("objectives.0.location", "Moon"),
        "objectives[0].location: unknown location 'Moon'",
    ),
    (
        "an objective of an unknown kind",
        _edit("objectives.0.kind", "lamp"),
        "objectives[0].kind: unknown objective kind 'lamp'",
    ),
    (
        "a contest by stat with no stat",
        _edit("objective_kinds.beacon.contest_stat", None),
        "objective_kinds.beacon: Value error, contest: highest_stat needs contest_stat",
    ),
    (
        "an unknown contest rule",
        _edit("objective_kinds.beacon.contest", "duel"),
        "objective_kinds.beacon.contest: Input should be 'highest_stat', 'random', 'nobody' or 'first'",
    ),
    (
        "a chance above 1",
        _edit("objective_kinds.bell.chance", 1.5),
        "objective_kinds.bell.chance: Input should be less than or equal to 1",
    ),
    (
        "delivery to an unknown place",
        _edit("objective_kinds.bell.deliver_to", ["Moon"]),
        "objective_kinds.bell.deliver_to[0]: unknown location 'Moon'",
    ),
    (
        "an unknown transition",
        _edit("objective_kinds.bell.transitions.exploded", {"text": "Boom."}),
        "objective_kinds.bell.transitions.exploded",
    ),
    (
        "a transition moving someone",
        _edit("objective_kinds.bell.transitions.claimed.effects", ["move"]),
        "objective_kinds.bell.transitions.claimed.effects[0]: 'move' cannot happen in a transition",
    ),
    (
        "a bare 'on' key (YAML reads it as true)",
        _edit("objective_kinds.bell.True", None),
        "YAML reads a bare on/off/yes/no as true/false",
    ),
    (
        "an unknown placeholder",
        _edit("actions.0.text", "{actor} rowed to {port}."),
        "actions[0].text: unknown placeholder {port}",
    ),
    ("a malformed template", _edit("stakes", "{lit of 3"), "stakes: malformed template"),
    ("a bad format spec", _edit("stakes", "{clock:zz}"), "stakes: bad format spec"),
    (
        "a move with no place to go",
        _edit("actions.10.effects", ["move"]),
        "actions[10].effects[0].move: moves to the action's target; expected the action to have target: location",
    ),
    ("a harm with no one to harm", _edit("actions.12.effects", [{"harm": 1}]), "actions[12].effects[0].harm.who:"),
    ("a cost in an unknown stat", _edit("actions.1.cost", {"luck": 1}), "actions[1].cost.luck: unknown stat 'luck'"),
    (
        "a negative cost",
        _edit("actions.1.cost", {"oil": -1}),
        "actions[1].cost: Value error, costs must not be negative",
    ),
    (
        "a condition at an unknown place",
        _edit("actions.8.when", {"at": ["Moon"]}),
        "actions[8].when.at[0]: unknown location 'Moon'",
    ),
    (
        "a condition on an unknown pool",
        _edit("actions.8.when", {"pool": {"fish": {"min": 1}}}),
        "actions[8].when.pool.fish: unknown pool 'fish'",
    ),
    (
        "an affinity outside [-1, 1]",
        _edit("actions.0.affinity", {"Harmony": 2}),
        "actions[0].affinity: Value error, affinities must lie in [-1, 1]",
    ),
    (
        "an importance above 10",
        _edit("actions.0.importance", 11),
        "actions[0].importance: Input should be less than or equal to 10",
    ),
    ("an unknown target kind", _edit("actions.0.target", "planet"), "actions[0].target: Input should be"),
    (
        "an unknown reach",
        _edit("actions.0.reach", "far"),
        "actions[0].reach: Input should be 'here', 'anywhere' or 'edge'",
    ),
    (
        "a target filter that does not fit",
        _edit("actions.1.targets", {"self": True}),
        "actions[1].targets: self/holding filter agent targets",
    ),
    (
        "an ending at an unknown objective",
        _edit("endings.0.when.objectives.which", ["Moon Beacon"]),
        "endings[0].when.objectives.which[0]: unknown objective 'Moon Beacon'",
    ),
    (
        "an ending with an empty condition",
        _edit("endings.0.when", {}),
        "endings[0].when: Value error, an empty condition",
    ),
    ("a score over an unknown pool", _edit("score.pools", {"fish": 1}), "score.pools.fish: unknown pool 'fish'"),
    ("no agents", _edit("agents", []), "agents: List should have at least 1 item"),
    ("no actions", _edit("actions", None, delete=True), "actions: Field required"),
    ("rounds of zero", _edit("rounds_per_cycle", 0), "rounds_per_cycle: Input should be greater than or equal to 1"),
    (
        "a pool named like a placeholder",
        _edit("pools", {"round": {"start": 1, "max": 2}}),
        "pools.round: the name 'round' is taken",
    ),
    (
        "a pool threshold outside its range",
        _edit("pools", {"oil_store": {"start": 5, "max": 10, "thresholds": [{"at": 20}]}}),
        "pools.oil_store.thresholds[0].at: 20 is outside the range [0, 10]",
    ),
    (
        "a regrowth capacity above the pool's max",
        _edit("pools", {"kelp": {"start": 5, "max": 10, "regrowth": {"rate": 0.2, "capacity": 50}}}),
        "pools.kelp.regrowth.capacity: 50; expected a capacity in (0, 10]",
    ),
    (
        "a world tag shadowing a default one",
        _edit("tags", {"travel": "going places"}),
        "tags.travel: 'travel' is a default tag already",
    ),
]


@pytest.mark.parametrize(("case", "edit", "expected"), MALFORMED, ids=[m[0] for m in MALFORMED])
def test_every_mistake_in_a_kit_yaml_is_one_line_naming_file_and_field(case, edit, expected):
    raw = isles_raw()
    edit(raw)
    with pytest.raises(ScenarioError) as caught:
        build(raw)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{ISLES}: ")
    assert expected in message, message


def test_invalid_yaml_a_list_and_a_missing_file_are_one_line(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nlocations: [a, b\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bad\.yaml: line \d+, column \d+: .*expected valid YAML$"):
        load_kit_file(bad)
    listed = tmp_path / "list.yaml"
    listed.write_text("- a\n- b\n", encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"list\.yaml: \(top level\): expected a mapping of world fields$"):
        load_kit_file(listed)
    with pytest.raises(ScenarioError, match=r"cannot read the file"):
        load_kit_file(tmp_path / "missing.yaml")


def test_a_world_with_a_custom_tag_declares_it():
    raw = isles_raw()
    raw["tags"] = {"seamanship": "handling a boat well"}
    raw["actions"][0]["tags"] = ["travel", "seamanship"]
    world = build(raw)
    assert world.actions["row"].tags == ["travel", "seamanship"] and world.tags == raw["tags"]


# ----------------------------------------------------------------------------------------------- resolvers

RESOLVER = '''
from amphoreus_graph.worlds.kit import Act


def ring(act: Act) -> None:
    """Ring a foghorn: the fog thins by 2, everyone's trust in the ringer rises, and the whole isles hear it."""
    thinned = -act.change_clock(-2)
    for other in act.standing():
        act.change_trust(other, act.actor, 0.1)
    act.announce()
    act.set_text(f"{act.actor} sounded the great foghorn; the fog thinned by {thinned:g}.")
    act.event("The foghorn echoed over every isle.", location="Far Skerry", involved=["Esk"])
'''


def test_one_action_is_one_yaml_entry_plus_a_resolver_beside_it(tmp_path):
    folder = tmp_path / "my-isles"
    folder.mkdir()
    text = ISLES.read_text(encoding="utf-8")
    entry = (
        "  - name: foghorn\n"
        "    help: sound the great foghorn at the Harbour\n"
        "    tags: [alliance, mirth]\n"
        "    verb: sound the foghorn\n"
        "    when: {at: [Harbour]}\n"
        "    importance: 5\n"
        "    resolver: horn.py:ring\n"
    )
    text = text.replace("\n\nagents:\n", "\n" + entry + "\nagents:\n", 1)
    (folder / "isles.yaml").write_text(text, encoding="utf-8")
    (folder / "horn.py").write_text(RESOLVER, encoding="utf-8")
    world = load_scenario(str(folder / "isles.yaml")).world
    assert isinstance(world, KitWorld) and "foghorn" in world.actions
    state = state_with(world, clock=5.0)
    assert "foghorn" in [o.action for o in world.perceive(state, "Ana").options]
    assert "foghorn" not in [o.action for o in world.perceive(state, "Cleo").options]
    result = resolve(world, state, {"Ana": d("foghorn", speech="Hear me!")})
    assert result.state["clock"] == 4  # −2 by the resolver, +1 for the round
    main, extra = result.events[0], result.events[1]
    assert main.id == "c1-r1-Ana" and extra.id == "c1-r1-Ana#2"
    assert main.text == 'At Harbour, Ana sounded the great foghorn; the fog thinned by 2. Ana said: "Hear me!"'
    assert main.public and main.importance == 5 and main.tags == ["alliance", "mirth"]
    assert extra.text == "At Far Skerry, The foghorn echoed over every isle." and "Esk" in extra.witnesses
    assert result.state["trust"]["Cleo"]["Ana"] == 0.1
    assert load_kit_file(ISLES).actions.keys() == isles_actions()  # the original world is untouched


def isles_actions() -> set[str]:
    return {a["name"] for a in isles_raw()["actions"]}


@pytest.mark.parametrize(
    ("resolver", "files", "expected"),
    [
        ("nowhere.py:ring", {}, "actions[0].resolver: no such resolver file"),
        (
            "horn.py:blow",
            {"horn.py": RESOLVER},
            "actions[0].resolver: horn.py has no 'blow'; expected a function named blow",
        ),
        ("horn.py:X", {"horn.py": "X = 3\n"}, "actions[0].resolver: 'X' is a int; expected a function"),
        (
            "horn.py:two",
            {"horn.py": "def two(a, b):\n    pass\n"},
            "'two' does not take one argument; expected def two(act: Act)",
        ),
        ("horn.py:ring", {"horn.py": "import nothing_at_all\n"}, "cannot load 'horn.py:ring' (ModuleNotFoundError"),
        ("no_such_module_anywhere:ring", {}, "cannot load 'no_such_module_anywhere:ring'"),
        ("ring", {}, "actions[0].resolver: 'ring'; expected file.py:function or module:function"),
    ],
)
def test_a_resolver_that_cannot_be_used_is_one_line(tmp_path, resolver, files, expected):
    for name, body in files.items():
        (tmp_path / name).write_text(body, encoding="utf-8")
    raw = isles_raw()
    raw["actions"][0]["resolver"] = resolver
    with pytest.raises(ScenarioError) as caught:
        build(raw, tmp_path / "isles.yaml")
    message = str(caught.value)
    assert "\n" not in message and expected in message, message


def test_a_resolver_may_be_named_as_module_function(monkeypatch, tmp_path):
    (tmp_path / "kit_test_horns.py").write_text(RESOLVER, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    raw = isles_raw()
    raw["actions"][10]["resolver"] = "kit_test_horns:ring"  # signal, now also thinned by the resolver
    world = build(raw)
    result = resolve(world, state_with(world, clock=6.0, active=["clock>=6"]), {"Ana": d("signal")})
    assert result.state["clock"] == 4  # −1 declared, −2 by the resolver, +1 for the round


# ----------------------------------------------------------------------------------------- shipped worlds


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_a_shipped_world_loads_and_runs_to_an_outcome(name):
    scenario = load_scenario(name)
    world = scenario.world
    assert isinstance(world, KitWorld) and scenario.source == SHIPPED[name]
    assert 10 <= world.rounds_per_cycle <= 12 and 5 <= len(world.agents) <= 10
    assert len({a.path for a in world.agents}) == len(world.agents)  # Paths chosen so their conflicts show
    for chooser in (pressing, random_choice):
        for seed in range(2):
            states, _, _, events = play(world, chooser, seed=seed)
            end = world.end(states[-1])
            assert end.outcome in {e.id for e in world.spec.endings} and end.text and end.score is not None
            assert set(end.tally) == {a.name for a in world.agents}
            ids = [e.id for e in events]
            assert len(ids) == len(set(ids))


@pytest.mark.parametrize("name", sorted(WITH_SEEDS))
def test_a_shipped_world_says_no_word_of_the_default_world(name):
    world = load_scenario(name).world
    assert isinstance(world, KitWorld)
    texts = [world.title, world.description, *world.vocabulary()]
    texts += [a.persona + a.title for a in world.agents] + [a.help + a.verb for a in world.actions.values()]
    texts += world.labels.model_dump().values()
    for chooser in (pressing, random_choice):
        for seed in range(3):
            texts += texts_of(world, play(world, chooser, seed=seed))
    folder = WITH_SEEDS[name].parent
    files = sorted(p for p in folder.rglob("*") if p.suffix in {".yaml", ".md", ".py"})
    # the package's and the CLI's own names are not the default world's words
    texts += [re.sub(r"amphoreus(_graph| simulate| report)", "", p.read_text(encoding="utf-8")) for p in files]
    hits = sorted({m.group() for t in texts for m in FORBIDDEN.finditer(t)})
    assert hits == []


@pytest.mark.parametrize("name", sorted(WITH_SEEDS))
def test_a_shipped_worlds_seeds_load_beside_it(name):
    from amphoreus_graph.memory.seeds import load_seeds

    scenario = load_scenario(name)
    assert scenario.seeds_dir == WITH_SEEDS[name].parent / "seeds"
    seeds: list[MemoryEvent] = load_seeds(scenario.seeds_dir, scenario.agent_names)
    assert len(seeds) >= len(scenario.agents)
    assert {w for s in seeds for w in s.witnesses} == set(scenario.agent_names)
    assert any(s.public for s in seeds) and any(s.secret for s in seeds)
    assert (WITH_SEEDS[name].parent / "README.md").is_file()


def _fishery_play(greedy: bool):
    world = load_scenario("fishery").world
    assert isinstance(world, KitWorld)

    def chooser(w: KitWorld, state, agent, rng) -> Decision:
        offered = {o.action: o.targets for o in w.perceive(state, agent).options}
        here = state["agents"][agent]["at"]
        if greedy:
            for action in ("trawl", "cast_nets", "handline"):
                if action in offered:
                    return d(action)
            for place in ("Deep Water", "The Shallows", "Saltmere Quay"):
                if place in offered.get("sail", []):
                    return d("sail", place)
        if "handline" in offered:
            return d("handline")
        return d("sail", "The Shallows") if here != "The Shallows" else d("swap_tales")

    return world, play(world, chooser)


def test_the_fishery_collapses_under_greed_and_rewards_a_sustainable_catch():
    world, greedy = _fishery_play(greedy=True)
    greedy_end = world.end(greedy[0][-1])
    assert greedy_end.outcome == "collapse" and greedy[0][-1]["round"] < world.rounds_per_cycle
    assert any("the bay has collapsed" in e.text for e in greedy[3])
    _, careful = _fishery_play(greedy=False)
    careful_end = world.end(careful[0][-1])
    assert careful_end.outcome == "season_end" and careful[0][-1]["pools"]["fish"] > 50
    assert careful_end.score is not None and greedy_end.score is not None
    assert careful_end.score > greedy_end.score + 2
    assert careful_end.text.startswith("The season ended with ")


def test_the_fishery_warns_restraint_as_the_bay_empties():
    world = load_scenario("fishery").world
    assert isinstance(world, KitWorld)
    full = world.genesis(1)
    full["agents"]["Ysolde Marr"]["at"] = "The Shallows"
    low = copy.deepcopy(full)
    low["pools"]["fish"] = 18.0
    rich, poor = world.perceive(full, "Ysolde Marr").pressures, world.perceive(low, "Ysolde Marr").pressures
    assert poor["cast_nets"] < rich.get("cast_nets", 0.0) <= 0 and poor["put_back"] > 0.4
    assert world.perceive(low, "Ysolde Marr").status["fish in the bay"] == "18/100"


def test_the_fairs_stage_needs_three_beams_raised_by_its_resolver():
    world = load_scenario("fair").world
    assert isinstance(world, KitWorld)
    state = world.genesis(1)
    for name in ("Tobias Finch", "Hollis Abernathy"):
        state["agents"][name]["at"] = "Village Green"
    state["round"] = 1
    beams = {n: d("raise_beam") for n in ("Marta Reyes", "Tobias Finch", "Hollis Abernathy")}
    result = resolve(world, state, beams, limit=12)
    assert result.state["objectives"]["Stage"]["status"] == "lit" and result.state["pools"]["stage"] == 3
    texts = [e.text for e in result.events]
    assert texts[0].startswith("At Village Green, Marta Reyes raised a beam for the stage (1 of 3)")
    assert "Hollis Abernathy raised the last beam of the stage. The Stage stands ready on Village Green." in texts[2]
    assert "raise_beam" not in [o.action for o in world.perceive(result.state, "Marta Reyes").options]


def test_the_reference_pages_example_loads_and_plays_to_an_outcome(tmp_path):
    page = (HERE.parent / "docs" / "worlds-kit.md").read_text(encoding="utf-8")
    example = page.split("```yaml\n", 1)[1].split("```", 1)[0]
    (tmp_path / "lighthouse.yaml").write_text(example, encoding="utf-8")
    world = load_scenario(str(tmp_path / "lighthouse.yaml")).world
    assert isinstance(world, KitWorld)
    states, _, _, events = play(world, pressing, seed=0)
    end = world.end(states[-1])
    assert end.outcome in {"both_lit", "wrecked", "dawn"} and events


def test_healing_presses_harder_the_more_hurt_the_patient_is(isles):
    fine = state_with(isles, agents={"Dov": {"at": "Low Key"}})
    hurt = state_with(isles, agents={"Dov": {"stats": {"health": 1.0}}})
    assert "tend" not in isles.perceive(fine, "Cleo").pressures
    assert isles.perceive(hurt, "Cleo").pressures["tend"] == pytest.approx(0.6 * 0.9)


def test_an_agent_offered_nothing_sits_the_round_out():
    raw = isles_raw()
    raw["clock"]["thresholds"][0]["forbid"] = [a["name"] for a in raw["actions"]]
    world = build(raw)
    calm, foggy = state_with(world), state_with(world, clock=6.0, active=["clock>=6"])
    assert world.actors(calm) == ["Ana", "Bram", "Cleo", "Dov", "Esk"]
    assert world.actors(foggy) == [] and world.frame(foggy, random.Random(0))[1] == {}


def test_a_kit_world_pickles_as_the_yaml_it_came_from():
    import pickle

    world = load_scenario("fishery").world
    again = pickle.loads(pickle.dumps(world))
    assert isinstance(again, KitWorld) and again.spec == world.spec and "trawl" in again.rules.resolvers


def test_trust_is_kept_sparse_and_perceived_whole(isles):
    """The state stores only trust that is not 0 (a dense matrix grows with N² in every checkpoint); each agent
    still perceives its trust in every other agent, and a trust brought back to 0 leaves the state."""
    state = isles.genesis(1)
    assert state["trust"] == {"Ana": {"Cleo": 0.5}, "Bram": {"Ana": -0.3}}
    assert turn_for(isles, state, "Dov").trust == {"Ana": 0.0, "Bram": 0.0, "Cleo": 0.0, "Esk": 0.0}
    kit = KitState.model_validate(state)
    kit.adjust_trust("Ana", "Cleo", -0.5)
    kit.adjust_trust("Dov", "Nobody", 0.4)
    kit.adjust_trust("Dov", "Dov", 0.4)
    assert kit.trust == {"Bram": {"Ana": -0.3}}
