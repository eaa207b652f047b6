"""Training data without shortcuts: the DPO card's probe finds a word that gives pairs away, off-Path
alternatives speak in the agent's own voice, and memory text neither repeats clauses nor lower-cases names."""

from __future__ import annotations

import json
import random

from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.data.candidates import offline_alternatives
from amphoreus_graph.data.shortcuts import probe_pairs
from amphoreus_graph.data.text_quality import repeats_a_clause, text_quality
from amphoreus_graph.memory.records import MemoryRecord
from amphoreus_graph.memory.reflection import OfflineReflector
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
    assert fair.heldout_accuracy is not None and abs(fair.heldout_accuracy - 0.5) < 0.15
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
    from amphoreus_graph.memory.embedder import default_embedder
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
