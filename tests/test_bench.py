"""Path Emanator benchmarks: items validate, baselines separate, the leaderboard is written, judges plug in."""

from __future__ import annotations

import json

import pytest

from amphoreus_graph.bench import generate
from amphoreus_graph.bench.items import ChoiceItem, VoiceItem, load_items, parse_items
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.paths import load_paths


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
    assert [r["model"] for r in data["models"]][0] == "offline"
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
    own = single["paths"]["Destruction"]["score"]
    others = [s["score"] for p, s in single["paths"].items() if p != "Destruction"]
    assert own >= 70 and max(others) < own - 30 and sum(others) / len(others) < 25
    confusion = single["tasks"]["path_voice"]["confusion"]
    assert all(max(row, key=row.get) == "Destruction" for row in confusion.values())


def test_item_files_validate_match_their_generator_and_have_both_splits():
    choice = load_items("path_choice", ChoiceItem)
    assert len(choice) >= 15 * 18
    assert all(sum(i.path == p for i in choice) >= 15 for p in load_paths().names())
    assert generate.path_choice_items() == [i.model_dump(mode="json") for i in choice]
    for task, model in (("path_choice", ChoiceItem), ("path_voice", VoiceItem)):
        assert load_items(task, model, "dev") and load_items(task, model, "heldout")
    heldout = {i.id for i in load_items("path_choice", ChoiceItem, "heldout")}
    assert not heldout & {i.id for i in load_items("path_choice", ChoiceItem, "dev")}


def test_a_broken_item_file_is_one_line():
    bad = "items:\n  - id: x\n    split: dev\n    path: Destruction\n    situation: s\n    options:\n"
    bad += "      - {path: Destruction, action: attack, target: A, text: t}\n"
    bad += "      - {path: Nowhere, action: jest, text: t}\n"
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
    assert sum(sum(r.values()) for r in row["tasks"]["path_voice"]["confusion"].values()) == 6 * 18


def test_bad_bench_input_is_one_line(cli):
    code, _, stderr = cli("bench", "--model", "offline", "--tasks", "nope")
    assert code == 2 and "--tasks: unknown ['nope']" in stderr
    code, _, stderr = cli("bench", "--model", "single-path:Nowhere")
    assert code == 2 and "unknown Path 'Nowhere'" in stderr
    code, _, stderr = cli("bench", "--model", "offline", "--split", "train")
    assert code == 2 and "--split 'train'" in stderr
