"""Path Emanator benchmarks: items validate, baselines separate, the leaderboard is written, judges plug in."""

from __future__ import annotations

import json

import pytest

from amphoreus_graph.bench import generate
from amphoreus_graph.bench.items import ChoiceItem, VoiceItem, load_items, parse_items
from amphoreus_graph.bench.leaderboard import PACKAGED_TASKS as TASKS
from amphoreus_graph.bench.leaderboard import bench_model
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import PolicyResult, TurnContext
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.policy.offline import OfflinePathPolicy

TOY = "tests/worlds/toy/toy.yaml"  # a world whose actions are not the default world's (pick, tend, gift, rest)


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    """The acceptance run: the offline policy against random and one-Path-for-everyone, all tasks, all items."""
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    out = tmp_path_factory.mktemp("bench")
    args = ["bench", "--model", "offline", "--model", "random", "--model", "single-path:Destruction"]
    result = CliRunner().invoke(app, [*args, "--tasks", "all", "--split", "all", "--seed", "0", "--out", str(out)])
    assert result.exit_code == 0, result.stdout + result.stderr
    return json.loads((out / "leaderboard.json").read_text()), out, result.stdout


def test_leaderboard_orders_the_baselines_with_separated_intervals(board):
    data, out, stdout = board
    rows = {r["model"]: r for r in data["models"]}
    assert data["models"][0]["model"] == "offline"
    for weaker in ("random", "single-path:Destruction"):
        assert rows["offline"]["ci"][0] > rows[weaker]["ci"][1]  # the gap is real: the intervals do not overlap
    assert "offline" in stdout and (out / "leaderboard.md").read_text().startswith("# Path Emanator leaderboard")
    assert (out / "leaderboard.png").stat().st_size > 10_000


def test_random_scores_at_chance(board):
    data, _, _ = board
    random = next(r for r in data["models"] if r["model"] == "random")
    choice, voice = random["tasks"]["path_choice"], random["tasks"]["path_voice"]
    assert choice["ci"][0] <= 25.0 <= choice["ci"][1]
    assert voice["ci"][0] <= 100 / 18 <= voice["ci"][1]


def test_single_path_is_high_only_on_its_own_path(board):
    data, _, _ = board
    single = next(r for r in data["models"] if r["model"] == "single-path:Destruction")
    # Per task where one Path's answer excludes the others (steadfastness does not: an attack suits The Hunt too);
    # high = at least twice chance on its own Path's dilemmas.
    for task in ("path_choice", "path_voice"):
        paths = single["tasks"][task]["paths"]
        others = [s["score"] for p, s in paths.items() if p != "Destruction"]
        assert paths["Destruction"]["score"] >= 50 and sum(others) / len(others) < 35, (task, paths)
    overall = single["paths"]
    assert max(overall, key=lambda p: overall[p]["score"]) == "Destruction"
    # The judge hears no Path word (it masks them), so a one-Path speaker is heard by its acts: whoever the subject,
    # Destruction is the Path heard most often.
    confusion = single["tasks"]["path_voice"]["confusion"]
    heard = {p: sum(row[p] for row in confusion.values()) for p in confusion}
    assert max(heard, key=lambda p: heard[p]) == "Destruction", heard


def test_item_files_validate_match_their_generator_and_have_both_splits():
    """Generated tasks' files are what their generator makes; Path-Choice's are written by hand (and checked in
    test_path_choice.py)."""
    for task in generate.GENERATORS:
        model = TASKS[task]().item_model
        assert generate.generated(task).items == [i.model_dump(mode="json") for i in load_items(task, model)], task
    assert "path_choice" not in generate.GENERATORS
    for task, model in (("path_choice", ChoiceItem), ("path_voice", VoiceItem)):
        assert load_items(task, model, "dev") and load_items(task, model, "heldout")
    heldout = {i.id for i in load_items("path_choice", ChoiceItem, "heldout")}
    assert not heldout & {i.id for i in load_items("path_choice", ChoiceItem, "dev")}


def test_a_broken_item_file_is_one_line():
    bad = "items:\n  - id: x\n    split: dev\n    path: Destruction\n    situation: s\n    options:\n"
    bad += "      - {path: Destruction, text: t}\n"
    bad += "      - {path: Nowhere, text: t}\n"
    with pytest.raises(AmphoreusError) as caught:
        parse_items(bad, "items.yaml", ChoiceItem)
    assert str(caught.value).startswith("items.yaml: items[0].options[1]") and "unknown Path 'Nowhere'" in str(
        caught.value
    )
    assert "\n" not in str(caught.value)


def test_model_policy_and_model_judge_run_through_the_same_turns(cli, tmp_path):
    code, stdout, stderr = cli(
        "bench", "--model", "scripted:seed=1", "--judge", "scripted:seed=2", "--tasks", "path_voice",
        "--tasks", "path_choice", "--split", "heldout", "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, stdout + stderr
    row = json.loads((tmp_path / "leaderboard.json").read_text())["models"][0]
    assert row["model"] == "scripted:seed=1" and 0 <= row["pes_score"] <= 100
    assert row["decisions"] > 0 and row["fallback_rate"] == 0.0
    assert sum(sum(r.values()) for r in row["tasks"]["path_voice"]["confusion"].values()) == 6 * 18


def test_bad_bench_input_is_one_line(cli):
    code, _, stderr = cli("bench", "--model", "offline", "--tasks", "nope")
    assert code == 2 and "--tasks: unknown ['nope']" in stderr
    code, _, stderr = cli("bench", "--model", "single-path:Nowhere")
    assert code == 2 and "unknown Path 'Nowhere'" in stderr
    code, _, stderr = cli("bench", "--model", "offline", "--split", "train")
    assert code == 2 and "'--split'" in stderr and "'train' is not one of 'dev', 'heldout', 'all'" in stderr
    assert len(stderr.strip().splitlines()) == 1


def test_all_tasks_separate_offline_from_the_baselines(board):
    data, _, _ = board
    rows = {r["model"]: r for r in data["models"]}
    assert set(data["tasks"]) >= {"path_choice", "path_voice", "erudition", "destruction"}
    steadfast = {m: r["tasks"]["destruction"] for m, r in rows.items()}
    assert steadfast["offline"]["ci"][0] > max(
        steadfast["random"]["ci"][1], steadfast["single-path:Destruction"]["ci"][1]
    )
    assert len(steadfast["offline"]["faithful_per_turn"]) == 5
    # The offline policy joins a memory and an observation through a name they share; random answers nothing.
    erudition = {m: r["tasks"]["erudition"] for m, r in rows.items()}
    assert erudition["offline"]["ci"][0] > erudition["random"]["ci"][1]
    # Asked what it remembers, the offline policy says the recalled memory that speaks to the question; random
    # says its top-ranked one. Over 18 Paths as the units the two intervals overlap; offline's score is above
    # random's interval.
    remembrance = {m: r["tasks"]["remembrance"] for m, r in rows.items()}
    assert remembrance["offline"]["score"] > remembrance["random"]["ci"][1]


def test_erudition_scores_an_answer_only_when_it_is_given_alone():
    import asyncio

    from amphoreus_graph.bench.tasks.erudition import EruditionTask, exact_match, token_f1
    from amphoreus_graph.contracts.turn import Decision

    assert exact_match("Castrum Kremnos", "I will go to castrum  kremnos, at once!")
    assert not exact_match("Castrum Kremnos", "Kremnos castrum") and not exact_match("Cerces", "Cercesia")
    assert token_f1("Castrum Kremnos", "Castrum Kremnos") == 1.0 and token_f1("a b", "c") == 0.0

    class ReadsEverythingAloud:
        """Says every fact it observes: the answer is among them, and so is every rival: it has chosen nothing."""

        name = "reads-aloud"

        async def adecide(self, turn):
            return PolicyResult(decision=Decision(action="study", speech=" ".join(turn.observations)))

    class SaysTheAnswer:
        """Says the one fact that holds the answer (it knows which): it must score 100."""

        name = "knows"

        async def adecide(self, turn):
            item = next(i for i in items if f"{i.question} " in turn.situation and i.facts == turn.observations)
            return PolicyResult(decision=Decision(action="study", speech=f"It is {item.answer}."))

    from amphoreus_graph.bench.items import EruditionItem

    items = load_items("erudition", EruditionItem, "heldout")
    shotgun = asyncio.run(EruditionTask().run(ReadsEverythingAloud(), BenchSettings(split="heldout")))
    assert shotgun.scores and all(s.score == 0.0 for s in shotgun.scores)
    assert 0 < shotgun.extra["token_f1"] < 100
    knowing = asyncio.run(EruditionTask().run(SaysTheAnswer(), BenchSettings(split="heldout")))
    assert knowing.scores and all(s.score == 1.0 for s in knowing.scores)


def test_a_turncoat_breaks_at_the_first_turn():
    import asyncio

    from amphoreus_graph.bench.items import SteadfastItem
    from amphoreus_graph.bench.tasks.destruction import DestructionTask

    tempters = {i.path: i.tempter for i in load_items("destruction", SteadfastItem, "heldout")}

    class Turncoat:
        """Decides and speaks as the tempter's Path from the first word."""

        name = "turncoat"

        async def adecide(self, turn):
            return await OfflinePathPolicy().adecide(turn.model_copy(update={"path": tempters[turn.path]}))

    result = asyncio.run(DestructionTask().run(Turncoat(), BenchSettings(split="heldout")))
    broke = [s.detail["broke_at"] for s in result.scores]
    assert sum(b == 1 for b in broke) / len(broke) > 0.8 and result.extra["never_broke"] < 10


def test_exports_drop_rows_that_quote_a_benchmark_item(tmp_path, cli):
    import asyncio

    from amphoreus_graph.memory.store import NullMemory
    from amphoreus_graph.society.runner import RunConfig, Simulation
    from amphoreus_graph.society.samples import ShardWriter, read_samples

    run = tmp_path / "run"
    asyncio.run(Simulation(RunConfig(scenario="trio", cycles=1, rounds=2, seed=1, out=run), memory=NullMemory()).run())
    samples = read_samples(run / "samples")
    dilemma = load_items("path_choice", ChoiceItem)[0].situation
    leaked = samples[0].model_copy(update={"id": "leak", "cycle": 9})
    leaked.messages[1] = {"role": "user", "content": f"Situation: {dilemma.upper()}  And then?"}
    ShardWriter(run / "samples").write_round([leaked], {})
    code, stdout, _ = cli("export", "sft", str(run), "--out", str(tmp_path / "sft"))
    assert code == 0 and "quoting a benchmark item: 1)" in " ".join(stdout.split())
    rows = (tmp_path / "sft" / "train.jsonl").read_text().splitlines()
    assert len(rows) == len(samples) and "leak" not in {json.loads(r)["id"] for r in rows}


class Recorder:
    """Decides as the offline policy and keeps every turn it was posed."""

    name = "recorder"

    def __init__(self) -> None:
        self.turns: list[TurnContext] = []

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        self.turns.append(turn)
        return await OfflinePathPolicy().adecide(turn)


def test_bench_in_another_scenario_poses_its_world_not_the_default_one(cli, tmp_path):
    import asyncio

    code, stdout, stderr = cli(
        "bench", "--model", "offline", "--scenario", "trio", "--tasks", "all", "--split", "heldout",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert code == 0, stdout + stderr
    board = json.loads((tmp_path / "leaderboard.json").read_text())
    assert board["settings"]["scenario"] == "trio" and "Scenario: trio." in (tmp_path / "leaderboard.md").read_text()
    assert set(board["models"][0]["tasks"]) == set(TASKS)

    recorder = Recorder()
    asyncio.run(bench_model(recorder, list(TASKS), BenchSettings(scenario="trio", split="heldout")))
    trio = scenario_of("trio")
    foreign = set(scenario_of("amphoreus").agent_names) - set(trio.agent_names)
    assert foreign and {t.world for t in recorder.turns} == {"trio"}
    for turn in recorder.turns:
        posed = turn.model_dump_json()
        assert not [name for name in foreign if name in posed], turn.run_id
        assert set(turn.trust) <= set(trio.agent_names) and not turn.pressures
    borrowed = {t.path: t.agent for t in recorder.turns if t.agent in trio.agent_names}
    assert borrowed == {a.path: a.name for a in trio.agents}  # a Path one of trio's agents walks borrows it


def test_a_world_with_other_actions_gets_items_for_every_task_or_says_which_it_skipped(tmp_path):
    import asyncio

    world = scenario_of(TOY).world
    recorder = Recorder()
    row = asyncio.run(bench_model(recorder, list(TASKS), BenchSettings(scenario=TOY, split="all")))
    for task, entry in row["tasks"].items():
        assert entry["n"] > 0, task
        if task in generate.GENERATORS:
            assert entry["skipped"] == [s.model_dump() for s in generate.generated(task, TOY).skipped]
    assert row["tasks"]["path_voice"]["skipped"] == [] and row["tasks"]["path_choice"]["skipped"] == []
    for turn in recorder.turns:
        assert turn.world.endswith("toy.yaml")
        if turn.choice:  # Path-Choice's options are lettered answers, in any world
            assert all(not o.tags for o in turn.options)
            continue
        assert set(turn.offered) <= set(world.actions)
        for option in turn.options:
            assert option.tags == world.actions[option.action].tags  # posed from the world's own specs


def test_the_studio_graph_takes_a_scenario(tmp_path):
    import asyncio

    from amphoreus_graph.bench.graph import build_benchmark_graph

    request = {"models": ["offline"], "tasks": ["path_choice"], "scenario": "trio", "out_dir": str(tmp_path)}
    state = asyncio.run(build_benchmark_graph().compile().ainvoke(request))
    assert state["leaderboard"]["settings"]["scenario"] == "trio"
    assert json.loads((tmp_path / "leaderboard.json").read_text())["settings"]["scenario"] == "trio"


def test_an_unknown_scenario_is_one_line(cli):
    code, _, stderr = cli("bench", "--model", "offline", "--scenario", "nowhere.yaml")
    assert code == 2 and "nowhere.yaml: no such scenario file" in stderr and "Traceback" not in stderr
