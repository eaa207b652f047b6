"""The LLM game master (world: gm) on the salt marsh (tests/worlds/prose/marsh.yaml), offline with the scripted
model: its events and changes drive the world while the kit's round end (journeys, regrowth, the tide's rise,
thresholds, endings) still runs; a garbage reply is repaired once, garbage twice or a failing model falls back to
the kit's rules, flagged; invalid changes are refused with a precise message; and a whole society lives under it.
"""

from __future__ import annotations

import asyncio
import json
import pickle
import random
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.contracts.memory import Moment
from amphoreus_graph.contracts.turn import Decision
from amphoreus_graph.contracts.world import Resolution, WorldState
from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.models.gateway import MalformedOutput
from amphoreus_graph.models.replies import parse_reply
from amphoreus_graph.society.chronicle import iter_chronicle
from amphoreus_graph.society.runner import RunConfig, Simulation
from amphoreus_graph.society.samples import read_samples
from amphoreus_graph.worlds.gm import GameMasterWorld, Reply
from amphoreus_graph.worlds.gm import prompt as gm_prompt
from amphoreus_graph.worlds.gm.apply import Applier
from amphoreus_graph.worlds.kit.rules import Round
from amphoreus_graph.worlds.kit.state import KitState

MARSH = Path(__file__).parent / "worlds" / "prose" / "marsh.yaml"
TOLD = "the game master let it be so"  # what the scripted game master's events say
DEFAULT_WORLD = re.compile(
    r"amphoreus|chrysos|coreflame|titan|black tide|lycurgus|vortex|flame-chase|era nova|okhema|\bheirs?\b", re.I
)
DECISIONS = {
    "Wren": Decision(action="walk", target="Reed Beds", speech="The north gate first."),
    "Tam": Decision(action="fish"),
    "Orla": Decision(action="shut", target="South Sluice"),
}


def variant(tmp_path: Path, name: str = "marsh", **game_master: Any) -> Path:
    """The marsh with its game_master block changed (None drops a key), written beside the test."""
    raw = yaml.safe_load(MARSH.read_text(encoding="utf-8"))
    for key, value in game_master.items():
        if value is None:
            raw["game_master"].pop(key, None)
        else:
            raw["game_master"][key] = value
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return path


def marsh(path: Path = MARSH) -> GameMasterWorld:
    """A fresh world (its own model, its own call counts): not the process's cached scenario."""
    world = load_scenario(path).world
    assert isinstance(world, GameMasterWorld)
    return world


def first_round(world: GameMasterWorld) -> WorldState:
    state, _ = world.frame(world.genesis(1), random.Random(0))
    return state


def resolve(world: GameMasterWorld, state: WorldState, decisions: dict[str, Decision] = DECISIONS) -> Resolution:
    moment = Moment.of(1, int(state["round"]), 6)
    return world.resolve(state, decisions, random.Random(1), moment, 6)


def test_the_game_masters_events_and_changes_drive_the_world():
    world = marsh()
    start = first_round(world)
    done = resolve(world, start)
    state = KitState.model_validate(done.state)

    told = [e for e in done.events if TOLD in e.text]
    assert [e.id for e in told] == ["c1-r1-Wren", "c1-r1-Tam", "c1-r1-Orla"]
    wren = told[0]
    assert wren.text == f'At Causeway, Wren set out to walk (Reed Beds), and {TOLD}. Wren said: "The north gate first."'
    assert wren.witnesses == ["Wren"] and wren.tags == ["travel", "wading"] and wren.action == "walk"
    assert told[1].witnesses == ["Tam"], "everyone at the actor's place as the round began (Wren was not there yet)"

    assert state.agents["Wren"].at == "Reed Beds", "the model's move, made by the kit's journeys"
    assert state.clock == 4, "2, +1 from the model, +1 the tide's own rise"
    assert state.pools["eels"] == 13, "Tam's catch is the model's to tell (it took none); the eels still regrow"
    assert state.objectives["South Sluice"].status.value == "free", "the kit's claim did not run"
    assert state.agents["Orla"].stats["strength"] == 5, "nor did the action's cost"

    fired = [e for e in done.events if e.text.startswith("The tide tops the lower banks")]
    assert len(fired) == 1 and fired[0].public and set(fired[0].witnesses) == {"Wren", "Tam", "Orla"}
    assert state.active == ["clock>=4"]

    asked = gm_prompt.messages(world.kit, world.config, world.names, start, DECISIONS, 6)
    assert done.cost.model_calls == 1 and done.cost.failures == 0 and done.cost.flags == []
    assert done.cost.tokens_in == len("\n".join(str(m.content) for m in asked)) // 4, "the scripted model's count"
    assert done.cost.tokens_out > 0


def test_the_worlds_thresholds_still_end_the_cycle():
    world = marsh()
    state = world.genesis(1)
    rest = {name: Decision(action="rest") for name in ("Wren", "Tam", "Orla")}
    for _ in range(6):
        state, _ = world.frame(state, random.Random(0))
        state = resolve(world, state, rest).state
        if world.outcome(state):
            break
    assert world.outcome(state) == "flooded" and state["round"] == 3, "2 -> 4 -> 6 -> 8: the tide's end threshold"
    assert world.end(state).text == "The tide rose to 8 and the fields drowned with 0 gates shut."


def test_a_garbage_reply_gets_one_repair_pass(tmp_path):
    world = marsh(variant(tmp_path, model="scripted:garbage=1"))
    done = resolve(world, first_round(world))
    assert done.cost.flags == ["repaired"] and done.cost.model_calls == 2 and done.cost.error is None
    assert sum(TOLD in e.text for e in done.events) == 3, "the repaired reply's events"
    assert KitState.model_validate(done.state).agents["Wren"].at == "Reed Beds"


def test_garbage_twice_falls_back_to_the_kits_rules(tmp_path):
    world = marsh(variant(tmp_path, model="scripted:garbage=2"))
    start = first_round(world)
    done = resolve(world, start)
    assert done.cost.flags == ["fallback"] and done.cost.model_calls == 2 and done.cost.failures == 0
    assert done.cost.error == "MalformedOutput: the reply holds no JSON object"
    kits = world.kit.resolve(start, DECISIONS, random.Random(1), Moment.of(1, 1, 6), 6)
    assert done.state == kits.state and done.events == kits.events, "the round resolved as the kit would"
    assert "Tam took 2 eels." in " ".join(e.text for e in done.events)
    assert KitState.model_validate(done.state).objectives["South Sluice"].status.value == "lit"


def test_a_failing_model_is_retried_then_falls_back(tmp_path):
    world = marsh(variant(tmp_path, model="scripted:fail=1", attempts=2))
    done = resolve(world, first_round(world))
    assert done.cost.model_calls == 2 and done.cost.failures == 2
    assert done.cost.flags == ["retried", "fallback"]
    assert done.cost.error == "ScriptedFailure: scripted model failure"
    assert KitState.model_validate(done.state).round == 1 and done.events


def test_the_game_master_resolves_inside_a_running_event_loop():
    world = marsh()
    state = first_round(world)

    async def from_a_coroutine() -> Resolution:
        return resolve(world, state)

    done = asyncio.run(from_a_coroutine())
    assert done.cost.flags == [] and sum(TOLD in e.text for e in done.events) == 3


def refusal(world: GameMasterWorld, reply: dict[str, Any]) -> str:
    """Why the world refuses a reply (checked by pydantic against its names, then applied to a round's copy)."""
    state = first_round(world)
    with pytest.raises(MalformedOutput) as refused:
        checked = parse_reply(json.dumps(reply), Reply, context=world.names)
        work = Round(world.kit.rules, KitState.model_validate(state), DECISIONS, random.Random(1), Moment.of(1, 1, 6))
        Applier(world.kit, work).carry_out(checked)
    return str(refused.value)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"type": "move", "agent": "Zed", "to": "Causeway"},
            "changes.0.move.agent: unknown agent 'Zed'; expected one of ['Wren', 'Tam', 'Orla']",
        ),
        (
            {"type": "stat", "agent": "Wren", "stat": "strength", "delta": 3},
            "changes.0 (stat): Wren's strength would be 8, outside its range [0, 6]",
        ),
        ({"type": "clock", "delta": -5}, "changes.0 (clock): the tide would be -3, outside its range [0, 8]"),
        (
            {"type": "objective", "objective": "North Sluice", "status": "held", "holder": "Tam"},
            "changes.0.objective: the North Sluice cannot be 'held'; expected one of ['free', 'lit', 'doused', 'lost']",
        ),
        (
            {"type": "objective", "objective": "North Sluice", "status": "lit", "holder": "Wren"},
            "changes.0 (objective): the North Sluice stands at Reed Beds and Wren is at Causeway",
        ),
        (
            {"type": "pool", "pool": "fish", "delta": 1},
            "changes.0.pool.pool: unknown pool 'fish'; expected one of ['eels']",
        ),
        (
            {"type": "end", "ending": "victory"},
            "changes.0.end.ending: unknown ending 'victory'; expected one of ['saved', 'flooded', 'long_tide']",
        ),
        ({"type": "move", "agent": "Wren", "to": "Causeway"}, "changes.0 (move): Wren is already at Causeway"),
        (
            {"type": "trust", "agent": "Tam", "towards": "Tam", "delta": 0.1},
            "changes.0 (trust): Tam has no trust in Tam to change; expected another agent",
        ),
        ({"type": "teleport", "agent": "Wren"}, "changes.0: Input tag 'teleport' found using 'type' does not match"),
    ],
)
def test_an_invalid_change_is_refused_with_a_precise_message(change, message):
    assert refusal(marsh(), {"events": [], "changes": [change]}).startswith(message)


def test_an_event_nobody_could_know_of_is_refused():
    event = {"actor": None, "text": "A heron laughed.", "public": False}
    assert refusal(marsh(), {"events": [event]}) == (
        "events.0: an event with no actor must be public or involve someone, or nobody would know of it"
    )


def test_a_valid_reply_may_say_a_state_in_the_worlds_words_and_fell_an_agent():
    world = marsh()
    reply = Reply.model_validate(
        {
            "events": [{"actor": "Orla", "text": "Orla heaved the South Sluice shut and collapsed.", "public": True}],
            "changes": [
                {"type": "objective", "objective": "South Sluice", "status": "shut", "holder": "Orla"},
                {"type": "stat", "agent": "Orla", "stat": "strength", "delta": -5},
                {"type": "tally", "agent": "Tam", "delta": 2},
            ],
        },
        context=world.names,
    )
    state = first_round(world)
    work = Round(world.kit.rules, KitState.model_validate(state), DECISIONS, random.Random(1), Moment.of(1, 1, 6))
    Applier(world.kit, work).carry_out(reply)
    after = work.s
    assert after.objectives["South Sluice"].status.value == "lit" and after.objectives["South Sluice"].by == "Orla"
    assert after.agents["Orla"].fallen and after.agents["Tam"].tally == 2
    texts = [e.text for e in work.events]
    assert texts[0] == "At Old Mill, Orla heaved the South Sluice shut and collapsed."
    assert "At Old Mill, Orla fell." in texts, "the kit's fall, told as the kit tells it"
    assert "At Causeway, Wren chose to walk." in texts[1] + texts[2] + "".join(texts), "untold decisions are kept"


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ({"tempo": 3}, r"marsh\.yaml: game_master\.tempo: Extra inputs are not permitted"),
        ({"temperature": 5}, r"game_master\.temperature: Input should be less than or equal to 2"),
        ({"model": "offline"}, r"game_master\.model: Value error, 'offline' is not a chat model"),
        ({"model": None}, r"game_master\.model: Field required"),
        ({"prose": "   "}, r"game_master\.prose: Value error, blank prose"),
        ({"model": "llama3"}, r"game_master: Value error, model 'llama3' names no provider"),
    ],
)
def test_a_bad_game_master_block_is_one_line(tmp_path, block, message):
    with pytest.raises(ScenarioError, match=message) as refused:
        load_scenario(variant(tmp_path, **block))
    assert "\n" not in str(refused.value)


def test_a_missing_game_master_block_or_model_is_one_line(tmp_path):
    raw = yaml.safe_load(MARSH.read_text(encoding="utf-8"))
    raw.pop("game_master")
    (tmp_path / "bare.yaml").write_text(yaml.safe_dump(raw), encoding="utf-8")
    with pytest.raises(ScenarioError, match=r"bare\.yaml: game_master: missing; expected a mapping"):
        load_scenario(tmp_path / "bare.yaml")
    world = marsh(variant(tmp_path, model="scripted:bogus=1"))
    with pytest.raises(ScenarioError, match=r"marsh\.yaml: game_master\.model: .*unknown option 'bogus'"):
        resolve(world, first_round(world))


def test_the_world_pickles_as_its_yaml():
    world = marsh()
    again = pickle.loads(pickle.dumps(world))
    assert isinstance(again, GameMasterWorld) and again.config == world.config and again.name == "marsh"
    assert again.genesis(1) == world.genesis(1)


@pytest.fixture(scope="module")
def society(tmp_path_factory) -> Path:
    """Three rounds under a game master whose first three replies are garbage: round 1 falls back (two garbage
    replies), round 2 is repaired (one), round 3 is the model's own."""
    folder = tmp_path_factory.mktemp("prose")
    scenario = variant(folder, model="scripted:garbage=3")
    run = folder / "run"
    asyncio.run(Simulation(RunConfig(scenario=str(scenario), cycles=1, rounds=3, out=run)).run())
    return run


def test_a_society_lives_under_the_game_master(society):
    rounds = list(iter_chronicle(society))
    samples = read_samples(society / "samples")
    assert [r.flags for r in rounds] == [
        ["fallback", "error: MalformedOutput: the reply holds no JSON object"],  # why it fell back, kept
        ["repaired"],
        [],
    ]
    assert not any(TOLD in e.text for e in rounds[0].events), "round 1: the kit's rules"
    for record in rounds[1:]:
        told = {e.id.split("-")[-1] for e in record.events if TOLD in e.text}
        acted = {s.agent for s in samples if s.round == record.round}
        assert told == acted and acted, "the model's events: one for each agent who acted (not those en route)"
    assert rounds[1].world.gauges[0].name == "tide" and rounds[1].world.gauges[0].value == 5, "3, then +1 +1"
    assert any(e.text.startswith("The tide tops the lower banks") for e in rounds[1].events), "a threshold fired"

    assert {s.round for s in samples} == {1, 2, 3} and {s.world for s in samples} == {"marsh"}
    assert all(s.context is not None and s.context.problem_with(s.decision) is None for s in samples)


def test_the_summary_counts_the_game_masters_calls_as_they_happened(society):
    summary = json.loads((society / "summary.json").read_text())
    flags = [[f for f in r.flags if not f.startswith("error: ")] for r in iter_chronicle(society)]
    fallbacks, repaired = flags.count(["fallback"]), flags.count(["repaired"])
    gm = summary["models"]["game_master"]
    assert (gm["fallbacks"], gm["repairs"]) == (fallbacks, fallbacks + repaired) == (1, 2), "a repair before each"
    assert gm["failures"] == {"garbage": 2 * fallbacks + repaired} == {"garbage": 3}
    assert gm["calls"] == 2 * fallbacks + 2 * repaired + flags.count([]) == 5 == summary["model_calls"]
    assert gm["tokens_in"] > gm["tokens_out"] > 0
    assert set(summary["models"]) == {"game_master"} and summary["fallbacks"] == 0, "the agents' own are apart"
    assert summary["cycles"][0]["outcome"] == "long_tide" and summary["cycles"][0]["rounds"] == 3


def test_nothing_the_game_master_wrote_names_the_default_world(society):
    for path in [*society.glob("samples/*.jsonl"), *society.glob("chronicle/*.jsonl"), society / "summary.json"]:
        found = DEFAULT_WORLD.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.name}: {sorted(set(found))}"


def test_a_replay_from_the_runs_cache_asks_the_game_master_nothing(society, tmp_path):
    """The game master's model is shared by every run of the process, yet answers from the run's response cache:
    a replay over the first run's cache makes no call and lives the same rounds, fallback and repair included."""
    replay = tmp_path / "run"
    config = json.loads((society / "config.json").read_text())
    asyncio.run(
        Simulation(RunConfig(scenario=config["scenario"], cycles=1, rounds=3, out=replay, cache_dir=society)).run()
    )
    summary = json.loads((replay / "summary.json").read_text())
    gm = summary["models"]["game_master"]
    assert gm["calls"] == 0 and gm["cache_hits"] == 5 and summary["model_calls"] == 0
    assert [r.flags for r in iter_chronicle(replay)] == [r.flags for r in iter_chronicle(society)]
    assert [s.model_dump() for s in read_samples(replay / "samples")] == [
        s.model_dump() for s in read_samples(society / "samples")
    ]


# --------------------------------------------------------------------------------- the kit's newer state


def market_master(tmp_path: Path) -> GameMasterWorld:
    """The kit's market test world (relations, a named clock) resolved by a game master."""
    raw = yaml.safe_load((Path(__file__).parent / "worlds" / "market" / "market.yaml").read_text(encoding="utf-8"))
    raw["world"] = "gm"
    raw["game_master"] = {"model": "scripted:seed=1", "prose": "A market town of grain, loans and a tithe."}
    path = tmp_path / "market.yaml"
    path.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return marsh(path)


def test_the_game_master_changes_relations_and_named_clocks_through_the_kits_effects(tmp_path):
    world = market_master(tmp_path)
    reply = Reply.model_validate(
        {
            "events": [{"actor": "Osric Vale", "text": "Osric lent Pell two coin.", "involved": ["Pell Marrow"]}],
            "changes": [
                {"type": "relation", "relation": "debt", "agent": "Pell Marrow", "towards": "Osric Vale", "delta": 2},
                {"type": "clock", "name": "season", "delta": 2},
                {"type": "trust", "agent": "Pell Marrow", "towards": "Osric Vale", "delta": 0.5},
            ],
        },
        context=world.names,
    )
    state = first_round(world)
    decisions = {"Osric Vale": Decision(action="wait")}
    work = Round(world.kit.rules, KitState.model_validate(state), decisions, random.Random(1), Moment.of(1, 1, 6))
    Applier(world.kit, work).carry_out(reply)
    assert work.s.relation_of("debt", "Pell Marrow", "Osric Vale") == 2
    assert work.s.clocks["season"] == state["clocks"]["season"] + 2
    assert work.s.trust_of("Pell Marrow", "Osric Vale") == 0.5
    told = gm_prompt.messages(world.kit, world.config, world.names, state, decisions, 6)
    prompt_text = "\n".join(str(m.content) for m in told)
    assert '"type": "relation"' in prompt_text and '"relations": {"debt": {"min": 0.0, "max": 1000.0}}' in prompt_text


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"type": "relation", "relation": "loan", "agent": "Osric Vale", "towards": "Pell Marrow", "delta": 1},
            "changes.0.relation.relation: unknown relation 'loan'; expected one of ['debt']",
        ),
        (
            {"type": "relation", "relation": "debt", "agent": "Osric Vale", "towards": "Pell Marrow", "delta": -1},
            "changes.0 (relation): Osric Vale's debt towards Pell Marrow would be -1, outside its range [0, 1000]",
        ),
        (
            {"type": "clock", "name": "season", "delta": 9},
            "changes.0 (clock): the harvest swell would be 9, outside its range [0, 3]",
        ),
        ({"type": "clock", "delta": 1}, "changes.0.clock: this world has no clock"),
    ],
)
def test_a_change_to_the_kits_newer_state_is_refused_precisely(tmp_path, change, message):
    assert refusal(market_master(tmp_path), {"events": [], "changes": [change]}).startswith(message)
