"""Path-Choice's items cannot be solved by length or by the Path's own words: the shortcut readers and the
`longest` baseline score near chance on every split of the shipped items, and a user's file that they can solve
is benchmarked with a warning that gives the figures."""

from __future__ import annotations

import asyncio
import json
import statistics

import pytest

from amphoreus_graph.bench.choice_balance import (
    LONGEST_SHARE,
    READER_MARGIN,
    audit,
    balance_warnings,
    hit,
    longest,
    profile_stems,
    profile_words,
    stem,
)
from amphoreus_graph.bench.items import ChoiceItem, load_items
from amphoreus_graph.bench.leaderboard import check_items
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.bench.tasks.path_choice import choice_turn, lettered, score_choices
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import Option, TurnContext
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.perception import build_turn
from tests.test_path_choice import bench_user_items

PATHS = ("Preservation", "Destruction", "Elation", "Nihility")


def _item(texts: list[str], path: str = "Preservation", split: str = "dev", n: int = 0) -> ChoiceItem:
    options = [{"path": p, "text": t} for p, t in zip(PATHS, texts, strict=True)]
    return ChoiceItem.model_validate(
        {"id": f"probe-{n}", "split": split, "path": path, "situation": "The river rises.", "options": options}
    )


@pytest.fixture(scope="module")
def shipped() -> list[ChoiceItem]:
    return load_items("path_choice", ChoiceItem)


def test_the_shipped_items_meet_both_bars_on_every_split(shipped):
    found = audit(shipped)
    assert [a.split for a in found] == ["dev", "heldout", "all"]
    for figures in found:
        assert not figures.misses(), figures
        assert LONGEST_SHARE[0] <= figures.own_longest <= LONGEST_SHARE[1]


def test_the_longest_reader_takes_the_longest_text_and_shares_ties():
    item = _item(["I stay.", "I pull it all down tonight.", "I laugh.", "I go."])
    assert longest(item) == [7.0, 27.0, 8.0, 5.0]
    assert hit(item, longest) == 0.0
    assert hit(_item(["I stay here.", "I leave now.", "I laugh.", "I go."]), longest) == 0.5


def test_the_profile_reader_counts_the_paths_own_words_inflected():
    own = "I shielded the children and endured the night."  # "shield", "endure": Preservation's profile
    assert {stem("shield"), stem("endure")} <= profile_stems("Preservation")
    item = _item([own, "I pull it all down tonight.", "I tell a story.", "I sit still."])
    scores = profile_words(item)
    assert scores[0] >= 1 and scores[0] > max(scores[1:]), scores
    assert hit(item, profile_words) == 1.0
    plain = _item(["I wait.", "I go.", "I sing.", "I sit."])
    assert hit(plain, profile_words) == 0.25, "a four-way tie is a uniform draw"


def test_an_unbalanced_set_is_named_with_its_figures():
    catalog = load_paths()
    items = [
        _item([catalog["Preservation"].summary + " So I hold the line all night long.", "I go.", "I sing.", "I sit."],
              split=split, n=n)
        for n, split in enumerate(["dev"] * 6 + ["heldout"] * 3)
    ]  # fmt: skip
    warnings = balance_warnings(items, "mine.jsonl")
    assert len(warnings) == 3, warnings  # dev, heldout and all
    assert all("longest in 100% of items" in w and "profile_words reader scores 100.0" in w for w in warnings)
    assert "mine.jsonl (heldout, 3 items)" in warnings[1]
    assert f"chance 25.0 ± {READER_MARGIN:g}" in warnings[0]


def test_other_tasks_items_get_no_balance_warning(tmp_path):
    mine = tmp_path / "voice.jsonl"
    mine.write_text(json.dumps({"id": "v1", "situation": "The well has run dry."}) + "\n")
    assert check_items("path_voice", mine) == []


def test_a_users_balanced_file_passes_quietly(shipped, tmp_path):
    mine = tmp_path / "mine.jsonl"
    mine.write_text("".join(json.dumps(i.model_dump()) + "\n" for i in shipped if i.split == "heldout"))
    assert check_items("path_choice", mine) == []


def test_bench_warns_about_a_users_unbalanced_file_and_still_runs(cli, tmp_path):
    catalog = load_paths()
    rows = [
        {"id": f"mine-{n}", "path": p, "situation": "The well has run dry.",
         "options": [{"path": p, "text": catalog[p].summary}, {"path": "Elation", "text": "I sing."},
                     {"path": "Nihility", "text": "I sit."}]}
        for n, p in enumerate(["Order", "Preservation", "Remembrance", "Beauty"])
    ]  # fmt: skip
    code, out, err = bench_user_items(cli, tmp_path, rows, "random")
    assert code == 0, out + err
    assert "warning:" in err and "longest in 100% of items" in err and "chance 33.3" in err, err
    assert (tmp_path / "board" / "leaderboard.json").exists()


def test_the_longest_baseline_is_at_chance_on_every_split(shipped):
    policy = resolve_model("longest")
    for split in ("dev", "heldout"):
        items = [i for i in shipped if i.split == split]
        scores = asyncio.run(score_choices(policy, items, BenchSettings(seed=0)))
        assert abs(100 * statistics.mean(s.score for s in scores) - 25) <= READER_MARGIN, split


def test_the_longest_baseline_answers_with_the_longest_text(shipped):
    item = shipped[0]
    decision = resolve_model("longest").decide(choice_turn(item, seed=2))  # type: ignore[attr-defined]
    picked = lettered(item, 2)[decision.action]
    assert len(picked.text) == max(len(o.text) for o in item.options) and decision.speech == picked.text


def test_the_longest_baseline_speaks_the_longest_offered_act_in_a_world():
    s = scenario_of("amphoreus")
    turn = build_turn("Phainon", s.world.genesis(1) | {"round": 1}, s, situation="Storm clouds gather.", seed=3,
                      memories=[], run_id="t")  # fmt: skip
    decision = resolve_model("longest").decide(turn)  # type: ignore[attr-defined]
    chosen = next(o for o in turn.options if o.action == decision.action)
    assert len(chosen.help) == max(len(o.help) for o in turn.options)
    assert decision.speech == chosen.help and turn.problem_with(decision) is None
    tied = TurnContext(run_id="t", seed=1, cycle=1, round=1, agent="A", path="Order",
                       options=[Option(action="wait", help="Wait."), Option(action="rest", help="Rest.")])  # fmt: skip
    picks = {resolve_model("longest").decide(tied.model_copy(update={"seed": n})).action for n in range(20)}  # type: ignore[attr-defined]
    assert picks == {"wait", "rest"}, "ties are drawn, not always the first"
