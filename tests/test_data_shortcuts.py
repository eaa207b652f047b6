"""Training data without shortcuts: the DPO card's probe finds a word that gives pairs away, off-Path
alternatives speak in the agent's own voice, and memory text neither repeats clauses nor lower-cases names."""

from __future__ import annotations

import json
import random
import statistics
from collections import Counter

from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.data.balance import balanced_by_act
from amphoreus_graph.data.candidates import offline_alternatives
from amphoreus_graph.data.dpo import reply_action
from amphoreus_graph.data.shortcuts import probe_pairs
from amphoreus_graph.data.text_quality import repeats_a_clause, text_quality
from amphoreus_graph.memory.records import MemoryRecord
from amphoreus_graph.memory.reflection import OfflineReflector
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.society.perception import build_turn
from amphoreus_graph.society.samples import Sample


def _reply(action: str, speech: str) -> list[dict[str, str]]:
    return [{"role": "assistant", "content": json.dumps({"action": action, "speech": speech})}]


def _pairs(tell: bool, n: int = 120) -> list[dict]:
    rng = random.Random(0)
    words = ["river", "stone", "lamp", "bread", "rope", "bell", "cart", "salt"]
    rows = []
    for _ in range(n):
        action = rng.choice(["help", "walk", "rest", "study"])
        chosen, rejected = " ".join(rng.sample(words, 3)), " ".join(rng.sample(words, 3))
        rows.append(
            {"chosen": _reply(action, chosen), "rejected": _reply(action, rejected + (" Xyzzy" if tell else ""))}
        )
    return rows


def test_the_probe_finds_a_word_that_gives_pairs_away_and_nothing_where_there_is_none():
    told = probe_pairs(_pairs(tell=True))
    assert told.heldout_accuracy is not None and told.heldout_accuracy > 0.95 and "xyzzy" in told.telling_words
    assert told.beyond_decision is not None and told.beyond_decision > 0.4
    fair = probe_pairs(_pairs(tell=False))
    assert fair.heldout_accuracy is not None and abs(fair.heldout_accuracy - 0.5) < 0.1
    assert fair.splits == 40 and fair.heldout_range is not None, "a mean over many halvings, with their spread"
    low, high = fair.heldout_range
    assert low <= fair.heldout_accuracy <= high and high - low > 0.02, "one halving is not the figure"
    assert probe_pairs(_pairs(tell=True, n=5)).heldout_accuracy is None, "too few pairs: not measured"


def _turn(agent: str = "Cyrene"):
    scenario = scenario_of("amphoreus")
    return build_turn(agent, scenario.world.genesis(1), scenario, situation="Dawn.", memories=[], seed=3, run_id="t")


def test_off_path_alternatives_decide_by_other_values_in_the_agents_own_voice():
    turn = _turn()
    sample = Sample.model_validate(
        {"id": "t/c1/r1/Cyrene", "run": "t", "world": "amphoreus", "cycle": 1, "round": 1, "agent": "Cyrene",
         "path": turn.path, "model": "offline", "context": turn.model_dump(), "messages": [],
         "decision": {"action": turn.options[0].action}}
    )  # fmt: skip
    catalog = load_paths()
    own_words = set(catalog[turn.path].speaking_words())
    for candidate in offline_alternatives(sample, turn, k=6, seed=1):
        assert turn.path not in candidate.decision.rationale and candidate.path not in candidate.decision.rationale
        opening = candidate.decision.speech.split("!")[0].lower()
        assert opening in own_words, (candidate.origin, candidate.decision.speech)


def test_alternatives_of_a_turn_draw_the_same_words_so_a_pair_differs_in_the_act():
    """Judges hear some of a Path's words as more on-Path than others: words drawn per candidate let a probe tell
    chosen from rejected by a word (the card's probe read 58-60% on them); drawn per turn, only the act differs."""
    turn = _turn("Mydeimos")
    sample = Sample.model_validate(
        {"id": "t/c1/r1/Mydeimos", "run": "t", "world": "amphoreus", "cycle": 1, "round": 1, "agent": "Mydeimos",
         "path": turn.path, "model": "offline", "context": turn.model_dump(), "messages": [],
         "decision": {"action": turn.options[0].action}}
    )  # fmt: skip
    speeches = [OfflinePathPolicy().decide(turn).speech]
    speeches += [c.decision.speech for c in offline_alternatives(sample, turn, k=8, seed=4)]

    def words_around_the_act(speech: str) -> tuple[str, str]:
        opening, rest = speech.split("!", 1)
        return opening, rest[rest.index("This is the way of") :]

    assert len({words_around_the_act(s) for s in speeches}) == 1, speeches
    assert len({s.split("!", 1)[1].split(".")[0] for s in speeches}) > 1, "the acts themselves differ"
    other_turn = OfflinePathPolicy().decide(turn.model_copy(update={"round": 2})).speech
    assert words_around_the_act(other_turn) != words_around_the_act(speeches[0]), "drawn afresh each turn"


def test_offline_reflections_neither_repeat_a_memory_nor_lower_case_a_name():
    record = MemoryRecord.model_validate(
        {"id": "r1", "text": "Mydeimos held the gate at dawn. Mydeimos said: nothing.", "owner": "Cyrene",
         "event_id": "e1", "kind": "observation", "cycle": 1, "round": 1, "importance": 5, "created": 1,
         "last_accessed": 1}
    )  # fmt: skip
    twin = record.model_copy(update={"id": "r2", "created": 2})
    other = record.model_copy(update={"id": "r3", "text": "Phainon walked to Okhema.", "created": 3})
    insight, cites = OfflineReflector(["Cyrene", "Mydeimos", "Phainon"]).reflect("Cyrene", "Remembrance",
                                                                                  [record, twin, other])  # fmt: skip
    assert insight.count("Mydeimos held the gate") == 1 and len(cites) == 2
    assert "mydeimos" not in insight and not repeats_a_clause(insight)


def test_text_quality_counts_repeated_clauses_and_lower_cased_names():
    memory = "- (cycle 1, round 2) At the well, Ana drew water. Ana said: I remember: at the well, Ana drew water."
    rows = [{"agent": "Ana", "messages": [{"role": "user", "content": f"You remember:\n{memory}\nana waves."}]}]
    quality = text_quality(rows)
    assert (quality.memory_lines, quality.repeated_clause_lines) == (1, 1)
    assert (quality.name_mentions, quality.lowercased_names) == (4, 1)
    assert not repeats_a_clause("Ana drew water at the well; then she rested.")


def test_a_question_is_answered_from_a_memory_and_an_observation_joined_by_a_name():
    from amphoreus_graph.models.embedder import default_embedder
    from amphoreus_graph.policy.answering import asks, two_hop

    memories = [
        "I saw Cerydra bury a sealed letter at Golden Fields.",
        "I saw Cifera bury a letter at Dragonbone City.",
    ]
    facts = ["Hysilens set out from Dragonbone City at dawn.", "Demetria set out from Golden Fields at dawn."]
    question = asks("The hall is quiet. Who set out from the place where Cerydra hid the letter? Answer aloud.")
    assert question == "Who set out from the place where Cerydra hid the letter?"
    assert two_hop(question, memories, facts, default_embedder()) == (memories[0], facts[1])
    assert two_hop(question, ["I like bread."], facts, default_embedder()) is None
    assert asks("Storm clouds gather.") is None


def _biased_pairs(n: int = 200) -> list[dict]:
    """Judges that prefer `help` and shun `attack` whatever the Path: the act alone tells most pairs."""
    rng = random.Random(1)
    acts = ["help", "walk", "rest", "attack"]
    rows = []
    for i in range(n):
        chosen = "help" if rng.random() < 0.6 else rng.choice(acts)
        rejected = "attack" if rng.random() < 0.6 else rng.choice(acts)
        margin = round(rng.uniform(0.5, 5.0), 2)
        rows.append({"id": f"p{i}", "margin": margin, "chosen": _reply(chosen, "x"), "rejected": _reply(rejected, "y")})
    return rows


def test_pairs_balanced_by_act_choose_every_act_as_often_as_they_reject_it():
    rows = _biased_pairs()
    assert probe_pairs(rows).decision_only_accuracy > 0.7  # the shortcut this removes
    balanced = balanced_by_act([[r] for r in rows], reply_action)  # one pair per turn: only leaving out helps
    kept, dropped = balanced.rows, balanced.left_out
    assert dropped == len(rows) - len(kept) and 0 < dropped < len(rows) and balanced.switched == 0
    chosen = Counter(reply_action(r, "chosen") for r in kept)
    rejected = Counter(reply_action(r, "rejected") for r in kept)
    assert chosen == rejected
    assert [r["id"] for r in kept] == [r["id"] for r in rows if r in kept], "order kept"
    assert probe_pairs(kept).decision_only_accuracy <= 0.6
    gone = [r for r in rows if r not in kept]
    assert statistics.fmean(r["margin"] for r in gone) < statistics.fmean(r["margin"] for r in kept), (
        "the least decided pairs go first"
    )


def test_balanced_pairs_are_left_alone_and_same_act_pairs_always_kept():
    rows = [
        {"id": "a", "margin": 1, "chosen": _reply("help", "x"), "rejected": _reply("walk", "y")},
        {"id": "b", "margin": 1, "chosen": _reply("walk", "x"), "rejected": _reply("help", "y")},
        {"id": "c", "margin": 1, "chosen": _reply("rest", "x"), "rejected": _reply("rest", "y")},
    ]
    assert balanced_by_act([[r] for r in rows], reply_action).rows == rows
    tipping = {"id": "d", "margin": 2, "chosen": _reply("help", "x"), "rejected": _reply("rest", "y")}
    balanced = balanced_by_act([[r] for r in [*rows, tipping]], reply_action)
    assert (balanced.rows, balanced.left_out) == (rows, 1), "the one pair that tips the balance goes, not another"
    closing = {"id": "e", "margin": 1, "chosen": _reply("help", "x"), "rejected": _reply("help", "y")}
    balanced = balanced_by_act([[r] for r in rows] + [[tipping, closing]], reply_action)
    assert balanced.rows == [*rows, closing] and (balanced.left_out, balanced.switched) == (0, 1), (
        "a turn with another pair that restores the balance keeps that one rather than leave the turn out"
    )


def test_a_pinned_turn_stays_and_what_it_leaves_out_of_balance_is_reported():
    human = {"id": "h", "margin": -1, "chosen": _reply("help", "x"), "rejected": _reply("rest", "y")}
    evens = {"id": "o", "margin": 3, "chosen": _reply("rest", "x"), "rejected": _reply("help", "y")}
    alone = balanced_by_act([[human]], reply_action, pinned=[True])
    assert (alone.rows, alone.left_out, alone.unbalanced) == ([human], 0, 1)
    both = balanced_by_act([[human], [evens]], reply_action, pinned=[True, False])
    assert (both.rows, both.unbalanced) == ([human, evens], 0)


def test_a_reply_that_states_no_decision_has_no_act():
    """Pairs written by hand or damaged on disk: an act balancer and the probe read them as having no act."""
    from amphoreus_graph.data.shortcuts import decision_text

    for reply in ("not json", "[1, 2]", '"a string"', None):
        row = {"chosen": [{"role": "assistant", "content": reply}], "rejected": []}
        assert reply_action(row, "chosen") == "" and reply_action(row, "rejected") == ""
        assert decision_text(row["chosen"]) == ""
    row = {"chosen": [{"role": "assistant", "content": '{"action": "rest", "target": "Okhema"}'}]}
    assert reply_action(row, "chosen") == "rest" and decision_text(row["chosen"]) == "rest Okhema"
