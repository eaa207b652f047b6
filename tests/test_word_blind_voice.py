"""Path-Voice words cannot game: the judge never hears a Path word, so saying them earns nothing."""

from __future__ import annotations

import asyncio
import re
import unicodedata

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amphoreus_graph.bench.classifier import PathClassifier, prototype_texts
from amphoreus_graph.bench.subjects import stage
from amphoreus_graph.bench.tasks.base import BenchSettings
from amphoreus_graph.bench.tasks.path_voice import PathVoiceTask
from amphoreus_graph.bench.voice_judge import ClassifierVoiceJudge, voice_probes
from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.paths import PathCatalog, load_paths
from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.turn import Decision, Option
from amphoreus_graph.data.judges import JudgeItem, OfflineJudge
from amphoreus_graph.policy.baselines import KeywordPolicy
from amphoreus_graph.policy.offline import OfflinePathPolicy

CHANCE = 100 / 18
USER_CATALOG = """
paths:
  - name: Kindness
    aeon: Mère Douce
    summary: Be gentle with everyone, and share what you have.
    tenets: [A neighbour helped is a day well spent.]
    tags: {care: 0.9}
    lexicon: [gentleness, fête, share the bread, neighbourly]
  - name: Control
    aeon: Warden
    summary: Keep every lever of the town in your own hand.
    tenets: [What is not commanded drifts.]
    tags: {authority: 0.9}
    lexicon: [command, tally, the ledger, obey]
"""
# Endings a speaker may put on a Path word, and ways to write it: the mask must take every one out.
ENDINGS = ["", "s", "es", "ed", "d", "ing", "er", "ers", "ly", "ness", "ful", "'s"]
CASES = [str.lower, str.upper, str.title, lambda s: s]


@pytest.fixture(scope="module")
def user_catalog(tmp_path_factory) -> PathCatalog:
    path = tmp_path_factory.mktemp("paths") / "paths.yaml"
    path.write_text(USER_CATALOG, encoding="utf-8")
    return load_paths(str(path))


def entries(catalog: PathCatalog) -> list[str]:
    """Every Path word, Path name and patron's name, without a leading article (no part of the word: "the trail"
    is "trail")."""
    found = {e for p in catalog.paths.values() for e in (p.name, p.patron, *p.lexicon) if e}
    return sorted({bare(e) for e in found})


def bare(entry: str) -> str:
    return re.sub(r"^(the|a|an) (?=\S)", "", entry, flags=re.I)


def inflect(entry: str, ending: str, case, accented: bool) -> str:
    """A Path word as a speaker might write it: the last word with an ending (a silent e dropped before a
    vowel, as English does; a word under four letters, a name like Lan or IX, takes only a possessive), in
    some case, its accents kept or stripped."""
    head, _, last = entry.rpartition(" ")
    if len(last) < 4 and ending != "'s":
        ending = ""
    if ending[:1] in ("e", "i") and last.endswith("e"):
        last = last[:-1]
    word = f"{head} {last}{ending}".strip()
    if not accented:
        word = "".join(c for c in unicodedata.normalize("NFKD", word) if not unicodedata.combining(c))
    return case(word)


def words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9']+", text.casefold())


@pytest.mark.parametrize("which", ["packaged", "world", "user"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_path_word_survives_the_mask(which, data, request):
    catalogs = {"packaged": load_paths, "world": lambda: scenario_of("amphoreus").catalog}  # the world's: its Aeons
    catalog = catalogs[which]() if which in catalogs else request.getfixturevalue("user_catalog")
    mask = PathWordMask.of(catalog)
    entry = data.draw(st.sampled_from(entries(catalog)))
    form = inflect(
        entry,
        data.draw(st.sampled_from(ENDINGS)),
        data.draw(st.sampled_from(CASES)),
        data.draw(st.booleans()),
    )
    before, after = data.draw(st.sampled_from(["They spoke of", "", "And so:"])), data.draw(st.sampled_from(["", "."]))
    said = f"{before} {form}{after} today".strip()
    masked = mask.mask(said)
    assert masked == " ".join(f"{before} {after} today".split()), (entry, form, masked)


def test_the_judge_hears_none_of_the_speakers_words(user_catalog, embedder):
    """What the judge's prototypes are made of and what it hears of a speaker share no Path word."""
    for catalog in (load_paths(), scenario_of("amphoreus").catalog, user_catalog):
        mask = PathWordMask.of(catalog)
        for path in catalog.paths.values():
            for text in prototype_texts(path, mask):
                assert mask.mask(text) == text, (path.name, text)
    packaged = PathWordMask.of(load_paths())
    for path in load_paths().names():
        spoken = KeywordPolicy().decide(_turn(path)).speech
        heard = packaged.mask(spoken)
        assert spoken and not [e for e in entries(load_paths()) if re.search(rf"\b{re.escape(e)}\b", heard, re.I)]
    # The packaged voice lines were written in no Path's words at all, nor the default world's Aeons' names.
    aeons = PathWordMask.of(scenario_of("amphoreus").catalog)
    assert all(aeons.mask(line) == line for p in load_paths().paths.values() for line in p.voice)
    # The probes the judge is measured on are not its prototypes.
    lines = {line for p in load_paths().paths.values() for line in p.voice}
    assert not lines & {p.text for p in voice_probes()}
    # A user catalog without voice lines is judged by its masked summary and tenets.
    classifier = PathClassifier(embedder, user_catalog)
    assert classifier.paths == ["Kindness", "Control"]
    assert classifier.probabilities(["I keep every lever in my own hand; what is not ordered drifts."])[0][1] > 0.5


def _turn(path: str):
    world = stage("amphoreus")
    return world.pose(path, item_id=f"probe/{path}", situation="Say what you think.", options=world.open_options(path))


def test_adding_or_removing_a_path_word_moves_no_verdict(embedder):
    classifier = PathClassifier(embedder)
    catalog = classifier.catalog
    rng = np.random.default_rng(0)
    pool = entries(catalog)
    texts = [p.text for p in voice_probes()]
    salted = []
    for text in texts:
        spoken = text.split()
        for _ in range(2):
            entry = pool[rng.integers(len(pool))]
            form = inflect(entry, ENDINGS[rng.integers(len(ENDINGS))], CASES[rng.integers(len(CASES))], True)
            spoken.insert(int(rng.integers(len(spoken) + 1)), form)
        salted.append(" ".join(spoken))
    # Probes hold (almost) no Path word of their own: salted, the judge hears exactly what it heard unsalted.
    assert np.array_equal(classifier.similarities(salted), classifier.similarities(texts))
    # The Nameless panel's Path fidelity alike: the same speech with or without its Path's words.
    judge = OfflineJudge(classifier)
    for path in catalog.names()[:6]:
        turn = _turn(path)
        action = turn.options[0].action
        plain = f"I will {action.replace('_', ' ')} now, because it is right."
        first, second = (bare(w) for w in catalog[path].lexicon[:2])
        worded = f"{first.upper()} {plain} {second}s"
        verdicts = judge.score(
            [JudgeItem(turn=turn, decision=Decision(action=action, speech=s)) for s in (plain, worded)]
        )
        (a, b) = (v["nameless"].scores["path_fidelity"] for v in verdicts)
        assert a == b, (path, a, b)


@pytest.fixture(scope="module")
def voice_runs():
    """Path-Voice on every item: the keyword-only speaker and the offline speaker."""
    setting = BenchSettings(split="all", seed=0)
    return {
        name: asyncio.run(PathVoiceTask().run(policy, setting))
        for name, policy in (("keywords", KeywordPolicy()), ("offline", OfflinePathPolicy()))
    }


def _score(verdicts: list[bool]) -> float:
    return 100 * sum(verdicts) / len(verdicts)


def test_keyword_speaker_scores_near_chance(voice_runs):
    result = voice_runs["keywords"]
    assert all(set(words(s.detail["speech"])) for s in result.scores)  # it did say its words
    assert abs(_score([s.score == 1.0 for s in result.scores]) - CHANCE) <= 5


def test_offline_speaker_is_not_heard_by_its_words(voice_runs):
    """The offline speaker's score with its Path's words and with them cut out of its speech (a plain string
    cut, not the judge's mask) differ by under 5 points."""
    result = voice_runs["offline"]
    catalog = load_paths()
    stripped = []
    for s in result.scores:
        speech = s.detail["speech"]
        for word in sorted(catalog[s.path].lexicon, key=len, reverse=True):
            speech = re.sub(rf"\b{re.escape(word)}\b", "", speech, flags=re.I)
        stripped.append(speech)
    heard = asyncio.run(ClassifierVoiceJudge().classify(stripped))
    with_words = _score([s.score == 1.0 for s in result.scores])
    without = _score([h == s.path for h, s in zip(heard, result.scores, strict=True)])
    assert abs(with_words - without) < 5, (with_words, without)


def test_keyword_policy_picks_the_option_with_most_of_its_words():
    catalog = load_paths()
    turn = _turn("Destruction")
    options = [
        Option(action="a", help="Sit quietly and wait."),
        Option(action="b", help="Smash the gate to rubble and let the ashes cool."),
        Option(action="c", help="Ruin one thing."),
    ]
    posed = turn.model_copy(update={"options": options, "choice": True})
    decision = KeywordPolicy().decide(posed)
    assert decision.action == "b"
    assert set(words(decision.speech)) <= {w for e in catalog["Destruction"].lexicon for w in words(e)}
