"""Path-Choice poses hand-written dilemmas as choice turns: lettered free-text options, no world action. A policy
wins only by reading the options: shuffled labels and text-blind policies score at chance."""

from __future__ import annotations

import asyncio
import json
import random
import statistics

import pytest

from amphoreus_graph.bench.items import ChoiceItem, load_items
from amphoreus_graph.bench.stats import score_results
from amphoreus_graph.bench.tasks.base import BenchSettings, TaskResult
from amphoreus_graph.bench.tasks.path_choice import choice_turn, lettered, score_choices
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Decision, PolicyResult, TurnContext
from amphoreus_graph.policy.prompt import user_prompt
from amphoreus_graph.policy.registry import resolve_model

BASELINES = ("offline", "random", "single-path:Destruction")


def _item(**changes) -> ChoiceItem:
    catalog = load_paths()
    raw = {
        "id": "probe",
        "split": "dev",
        "path": "Preservation",
        "situation": "A flood is coming to the valley and the village must decide what to do tonight.",
        "options": [{"path": p, "text": catalog[p].summary} for p in ("Preservation", "Destruction", "Elation")],
        **changes,
    }
    return ChoiceItem.model_validate(raw)


class TextBlind:
    """Answers without reading the options' texts: by letter, or by the length of the text."""

    def __init__(self, how: str) -> None:
        self.name = f"text-blind:{how}"
        self.how = how

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        if self.how == "first":
            pick = turn.options[0]
        else:
            pick = max(turn.options, key=lambda o: len(o.help) * (1 if self.how == "longest" else -1))
        return PolicyResult(decision=Decision(action=pick.action))


def _score(policy, items: list[ChoiceItem], seed: int = 0) -> float:
    scores = asyncio.run(score_choices(policy, items, BenchSettings(seed=seed)))
    return 100 * statistics.mean(s.score for s in scores)


def test_a_choice_turn_letters_free_text_and_implies_no_world_action():
    item = _item()
    turn = choice_turn(item, seed=3)
    assert turn.choice and [o.action for o in turn.options] == ["A", "B", "C"]
    assert {o.help for o in turn.options} == {o.text for o in item.options}
    assert all(not o.tags and not o.targets for o in turn.options)
    assert "its letter is your action" in user_prompt(turn)
    assert "Preservation" not in "".join(o.help for o in turn.options if o.help != item.own_option().text)
    assert lettered(item, 3) == lettered(item, 3)
    orders = {tuple(o.path for o in lettered(item, seed).values()) for seed in range(12)}
    assert len(orders) > 1, "the own option sits under the same letter for every seed"


def test_items_are_refused_when_two_options_embody_one_path_or_none_is_own():
    with pytest.raises(ValueError, match="different Path"):
        _item(options=[{"path": "Preservation", "text": "a"}, {"path": "Elation", "text": "b"},
                       {"path": "Elation", "text": "c"}])  # fmt: skip
    with pytest.raises(ValueError, match="exactly one option"):
        _item(options=[{"path": "Order", "text": "a"}, {"path": "Elation", "text": "b"}])


def test_the_offline_policy_reads_the_options():
    """Options that are the Paths' own summaries: reading them, the offline policy finds its own every time."""
    catalog = load_paths()
    items = [
        _item(id=f"probe-{p}", path=p, options=[{"path": q, "text": catalog[q].summary} for q in (p, *others)])
        for p, others in (
            ("Preservation", ("Destruction", "Elation", "Nihility")),
            ("Erudition", ("Order", "Enigmata", "Harmony")),
            ("Abundance", ("Finality", "The Hunt", "Beauty")),
        )
    ]
    assert _score(resolve_model("offline"), items) == 100.0


@pytest.fixture(scope="module")
def items() -> list[ChoiceItem]:
    return load_items("path_choice", ChoiceItem)


def _relabelled(items: list[ChoiceItem], seed: int) -> list[ChoiceItem]:
    """The same texts, with the Path labels dealt out to them at random."""
    rng = random.Random(seed)
    out = []
    for item in items:
        paths = [o.path for o in item.options]
        rng.shuffle(paths)
        options = [o.model_copy(update={"path": p}) for o, p in zip(item.options, paths, strict=True)]
        out.append(item.model_copy(update={"options": options}))
    return out


@pytest.mark.parametrize("model", BASELINES)
def test_shuffled_labels_take_every_baseline_to_chance(items, model):
    policy = resolve_model(model)
    chance = 100 * statistics.mean(1 / len(i.options) for i in items)
    deals = 6
    scores = [_score(policy, _relabelled(items, seed)) for seed in range(deals)]
    # a label-blind policy hits each dealt answer with chance p: allow three standard errors of that mean
    p = chance / 100
    allowed = 300 * (p * (1 - p) / (deals * len(items))) ** 0.5
    assert abs(statistics.mean(scores) - chance) <= allowed, (model, scores, allowed)


@pytest.mark.parametrize("how", ["first", "longest", "shortest"])
def test_a_policy_that_ignores_the_text_scores_at_chance(items, how):
    """No letter and no length gives the answer away: the text-blind answers' 95% interval holds chance."""
    scores = asyncio.run(score_choices(TextBlind(how), items, BenchSettings(seed=0)))
    scored = score_results([TaskResult(task="path_choice", scores=scores)], seed=0).tasks["path_choice"]
    chance = 100 * statistics.mean(1 / len(i.options) for i in items)
    assert scored.ci[0] <= chance <= scored.ci[1], (how, scored)


def test_the_items_are_hand_written_for_every_path_with_a_held_out_split(items):
    by_path = {p: [i for i in items if i.path == p] for p in load_paths().names()}
    assert all(len(found) >= 10 for found in by_path.values()), {p: len(f) for p, f in by_path.items()}
    assert all({i.split for i in found} == {"dev", "heldout"} for found in by_path.values())
    catalog = load_paths()
    spoken = {w.lower() for p in catalog.names() for w in catalog[p].lexicon}
    texts = [t.lower() for i in items for t in (i.situation, *(o.text for o in i.options))]
    leaks = sorted({w for w in spoken for t in texts if f" {w} " in f" {t} "})
    assert not leaks, f"item texts use the Paths' lexicon words: {leaks[:10]}"


def bench_user_items(cli, tmp_path, rows: list[dict], model: str) -> tuple[int, str, str]:
    """`amphoreus bench` on Path-Choice with `rows` as the user's JSONL `--items`, its board in tmp_path/board."""
    mine = tmp_path / "mine.jsonl"
    mine.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return cli("bench", "--model", model, "--task", "path_choice", "--items", str(mine),
               "--out", str(tmp_path / "board"))  # fmt: skip


def test_bench_runs_a_users_jsonl_items(cli, tmp_path):
    catalog = load_paths()
    rows = [
        {"id": f"mine-{n}", "path": p, "situation": "The well has run dry.",
         "options": [{"path": q, "text": catalog[q].summary} for q in (p, "Elation")]}
        for n, p in enumerate(["Order", "Preservation", "Remembrance"])
    ]  # fmt: skip
    code, out, err = bench_user_items(cli, tmp_path, rows, "offline")
    assert code == 0, out + err
    board = json.loads((tmp_path / "board" / "leaderboard.json").read_text())
    assert board["models"][0]["tasks"]["path_choice"]["n"] == 3


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"id": "x", "path": "Order"\n', "mine.jsonl:1: not valid JSON"),
        ('{"id": "x", "path": "Order", "situation": "s", "options": []}\n', "mine.jsonl:1: options"),
        (
            '{"id": "x", "path": "Nope", "situation": "s", "options": [{"path": "Order", "text": "a"}, '
            '{"path": "Elation", "text": "b"}]}\n',
            "unknown Path 'Nope'",
        ),
        ("[1, 2]\n", "mine.jsonl:1: expected a JSON object"),
        ("\n\n", "no items"),
    ],
)
def test_a_broken_items_file_is_one_line(cli, tmp_path, content, expected):
    mine = tmp_path / "mine.jsonl"
    mine.write_text(content)
    code, out, err = cli("bench", "--model", "offline", "--task", "path_choice", "--items", str(mine),
                         "--out", str(tmp_path / "board"))  # fmt: skip
    assert code == 2 and expected in err and "Traceback" not in err, out + err
    assert len(err.strip().splitlines()) == 1 and not (tmp_path / "board").exists()


def test_items_need_exactly_one_task(cli, tmp_path):
    mine = tmp_path / "mine.jsonl"
    mine.write_text("{}\n")
    code, _, err = cli("bench", "--model", "offline", "--items", str(mine), "--out", str(tmp_path / "b"))
    assert code == 2 and "exactly one --task" in err
