"""The Remembrance benchmark: planted facts asked after world resets, scored per Path retention policy."""

from __future__ import annotations

import asyncio

import pytest

from amphoreus_graph.bench import generate
from amphoreus_graph.bench.items import load_items, parse_items
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.bench.tasks.remembrance import RECALL_K, RemembranceItem, RemembranceTask
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Decision, PolicyResult
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.policy.offline import OfflinePathPolicy


class ReadsEveryMemoryAloud:
    """Says every memory it recalled (or only the first `quote` of them)."""

    name = "reads-aloud"

    def __init__(self, quote: int | None = None) -> None:
        self.turns: list = []
        self.quote = quote

    async def adecide(self, turn):
        self.turns.append(turn)
        said = " ".join(m.text for m in turn.memories[: self.quote])
        return PolicyResult(decision=Decision(action="remember", speech=said))


@pytest.fixture(scope="module")
def offline():
    return asyncio.run(RemembranceTask().run(OfflinePathPolicy(), BenchSettings(split="all")))


def test_scores_fall_with_what_the_retention_policy_keeps(offline):
    by_mode = offline.extra["retention"]
    assert set(by_mode) == {"all", "echoes", "none"}
    accuracy = {mode: by_mode[mode]["accuracy"] for mode in by_mode}
    recall = {mode: by_mode[mode]["recall_at_k"] for mode in by_mode}
    assert accuracy["all"] > accuracy["echoes"] > accuracy["none"] == 0.0
    assert recall["all"] == 100.0 > recall["echoes"] > recall["none"] == 0.0  # `all` keeps every planted fact
    assert all(accuracy[m] <= recall[m] for m in by_mode)  # the offline policy quotes only its top memory
    assert offline.extra["k"] == RECALL_K and 0 < offline.extra["recall_at_k"] < 100
    assert by_mode["all"]["n"] == by_mode["none"]["n"] == len(load_items("remembrance", RemembranceItem))
    resets = offline.extra["resets"]
    assert list(resets) == ["1", "2", "3"] and resets["1"]["recall_at_k"] > resets["3"]["recall_at_k"]


def test_every_path_is_posed_every_item_with_its_recall_in_the_detail(offline):
    items = load_items("remembrance", RemembranceItem)
    assert len(offline.scores) == len(items) * len(load_paths().names())
    assert {s.path for s in offline.scores} == set(load_paths().names())
    remembrance = [s for s in offline.scores if s.path == "Remembrance"]
    assert all(s.detail["retention"] == "all" and s.detail["recall_at_k"] == 1.0 for s in remembrance)
    assert all(s.detail["rank"] is None and s.score == 0 for s in offline.scores if s.path == "Nihility")


def test_a_policy_that_reads_out_every_memory_has_not_answered_and_one_that_quotes_its_best_has():
    """Recall brings the fact back among its rivals: reading them all out names every candidate answer (no
    credit where a distractor was recalled too); quoting the memory recall ranked first answers exactly when that
    memory is the fact."""
    reader = ReadsEveryMemoryAloud()
    result = asyncio.run(RemembranceTask().run(reader, BenchSettings(split="heldout")))
    assert result.scores and all(s.score <= s.detail["recall_at_k"] for s in result.scores)
    assert result.extra["retention"]["all"]["accuracy"] < 50.0 < result.extra["retention"]["all"]["recall_at_k"]
    top = asyncio.run(RemembranceTask().run(ReadsEveryMemoryAloud(quote=1), BenchSettings(split="heldout")))
    assert all(s.score == float(s.detail["rank"] == 1) for s in top.scores)
    by_mode = top.extra["retention"]
    assert by_mode["all"]["accuracy"] > result.extra["retention"]["all"]["accuracy"]
    assert by_mode["none"]["accuracy"] == 0.0
    items = {i.id: i for i in load_items("remembrance", RemembranceItem, "heldout")}
    for turn in reader.turns:
        item = items[turn.run_id.removeprefix("bench/").split("/")[0]]
        assert item.question in turn.situation and item.answer not in turn.situation
        assert len(turn.memories) <= RECALL_K and turn.cycle == item.resets + 1 and not turn.observations


def test_item_file_validates_matches_its_generator_and_has_a_heldout_split():
    items = load_items("remembrance", RemembranceItem)
    assert generate.generated("remembrance").items == [i.model_dump(mode="json") for i in items]
    heldout = {i.id for i in load_items("remembrance", RemembranceItem, "heldout")}
    dev = {i.id for i in load_items("remembrance", RemembranceItem, "dev")}
    assert heldout and dev and not heldout & dev and heldout | dev == {i.id for i in items}
    assert {i.resets for i in items} == {1, 2, 3}
    assert {i.resets for i in items if i.id in heldout} == {1, 2, 3}


def test_an_item_whose_answer_is_not_in_its_fact_is_one_line():
    bad = (
        "items:\n  - id: x\n    split: dev\n    resets: 1\n    later: []\n"
        "    fact: {text: Cyrene hid the lamp in Okhema., importance: 5, round: 1}\n"
        "    distractors: [{text: Phainon hid a sword in Styxia., importance: 3, round: 2}]\n"
        "    question: Where did Cyrene hide the lamp?\n    answer: Styxia\n"
    )
    with pytest.raises(AmphoreusError) as caught:
        parse_items(bad, "remembrance.yaml", RemembranceItem)
    assert str(caught.value).startswith("remembrance.yaml: items[0]") and "\n" not in str(caught.value)
    assert "answer must appear in the fact's gist" in str(caught.value)
