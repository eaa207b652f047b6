"""Secrets never reach the data: the discretion guard on every reply (policy/discretion.py), its matching, its flags
and counts, and the exports that leave guarded rows out. A model that ignores its prompt and quotes its memories
(`scripted:quote=1`) is the careless speaker; `heed=1` makes it listen when asked again."""

from __future__ import annotations

import json
import string
from collections import Counter
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.turn import Decision, Option, PolicyResult, TurnContext
from amphoreus_graph.memory.seeds import load_seeds, seeds_folder
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.policy import discretion
from amphoreus_graph.policy.discretion import (
    NEUTRAL_LINE,
    SECRET_REDACTED,
    SECRET_REPAIRED,
    content_words,
    discreet,
    gives_away,
    redact,
)
from amphoreus_graph.policy.llm import LLMPolicy
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import SECRET_MARK
from amphoreus_graph.policy.routing import RoutedPolicy
from amphoreus_graph.society.samples import Sample, read_samples
from tests.test_secrets import SEAL, SECRET, WALK, _small_amphoreus, _turn

# ----------------------------------------------------------------------------------------------- matching

_STOP = set(discretion._STOP_WORDS)
WORD = st.text(alphabet=string.ascii_lowercase, min_size=4, max_size=9).filter(lambda w: w not in _STOP)
SECRET_WORDS = st.lists(WORD, min_size=5, max_size=10, unique_by=lambda w: content_words(w)[0])
_ACCENTS = "\u0301\u0300\u0308\u0302\u0327\u0303"  # acute, grave, diaeresis, circumflex, cedilla, tilde
_SPACES = [" ", "  ", "\n", "\t", " \n  ", "\r\n", "\u00a0"]
_MARKS = [",", ";", ":", "!", "?", "...", "\u2014", " -", " (", ")", "\u201c", "\u201d", "\u00ab", "\u00bb", "' "]
_QUOTES = [('"', '"'), ("\u201c", "\u201d"), ("\u00ab ", " \u00bb"), ("'", "'"), ("\u2018", "\u2019"), ("`", "`")]


@st.composite
def mangled(draw: st.DrawFn, words: list[str]) -> str:
    """The words as someone might put them in speech: cased anyhow, accented, full-width here and there, broken
    across lines (hyphenated or not), punctuated and quoted."""
    out = []
    for word in words:
        letters = []
        for c in word:
            if draw(st.booleans()):
                c = c.upper()
            if draw(st.integers(0, 5)) == 0:
                c += draw(st.sampled_from(_ACCENTS))
            if draw(st.integers(0, 9)) == 0 and c.isascii():
                c = chr(ord(c) + 0xFEE0)  # full width: NFKD folds it back
            letters.append(c)
        if len(letters) > 2 and draw(st.integers(0, 4)) == 0:
            at = draw(st.integers(1, len(letters) - 1))
            letters.insert(at, draw(st.sampled_from(["-\n", "-\r\n  ", "\u00ad", "- \n"])))  # hyphenated at a line end
        text = "".join(letters)
        if draw(st.integers(0, 4)) == 0:
            opening, closing = draw(st.sampled_from(_QUOTES))
            text = f"{opening}{text}{closing}"
        out.append(text)
    joined = out[0]
    for text in out[1:]:
        mark = draw(st.sampled_from(["", "", *_MARKS]))
        joined += mark + draw(st.sampled_from(_SPACES)) + text
    opening, closing = draw(st.sampled_from([("", ""), *_QUOTES]))
    return f"{opening}{joined}{closing}"


@settings(max_examples=150, deadline=None)
@given(data=st.data(), words=SECRET_WORDS)
def test_a_secret_said_in_any_case_accent_spacing_punctuation_or_quoting_is_caught(data, words):
    secret = data.draw(mangled(words), label="the secret as written")
    said = data.draw(mangled(words), label="the secret as said")
    speech = f"Ha! I will jest.\nListen: {said} That is all."
    assert gives_away(secret, speech), (secret, speech)


@settings(max_examples=200, deadline=None)
@given(data=st.data(), words=SECRET_WORDS)
def test_a_run_of_its_words_or_most_of_them_in_any_order_is_caught(data, words):
    start = data.draw(st.integers(0, len(words) - discretion.LEAK_SPAN))
    run = words[start : start + discretion.LEAK_SPAN]
    assert gives_away(" ".join(words), f"So: {data.draw(mangled(run))}.")
    most = data.draw(st.permutations(words))[: max(discretion.LEAK_MIN_WORDS, (len(words) + 1) // 2)]
    assert gives_away(" ".join(words), " and ".join(most) + "!")


@settings(max_examples=200, deadline=None)
@given(data=st.data(), words=SECRET_WORDS, others=st.lists(WORD, min_size=3, max_size=30))
def test_speech_that_shares_a_word_or_two_with_a_secret_is_not_caught(data, words, others):
    hidden = set(content_words(" ".join(words)))
    others = [w for w in others if not set(content_words(w)) & hidden]
    shared = data.draw(st.lists(st.sampled_from(words), max_size=2))
    speech = data.draw(st.permutations([*others, *shared]))
    said = data.draw(mangled(speech)) if speech else ""
    assert not gives_away(" ".join(words), said), said


def test_matching_folds_what_typing_and_typesetting_change():
    secret = "Renée hid the Café's ledger under the Straße bridge"
    for said in (
        "RENEE hid the cafe’s LEDGER under the strasse bridge",  # no accents, curly apostrophe, ß as ss
        "Renée hid the Ca-\nfé's led-\n  ger under the Stra\u00adße bridge",  # hyphenated across lines, soft hyphen
        "«Renée» — hid… the ‘Café’s’ ledger,\nunder the Straße bridge",
        "Ｒｅｎéｅ ｈｉｄ the Café's ledger under the Straße bridge",  # full width
    ):
        assert gives_away(secret, said), said
    assert gives_away("Η Ελένη έκρυψε το κλειδί στο πηγάδι της αυλής", "η ελενη εκρυψε το κλειδι στο πηγαδι!")
    assert content_words("The Council’s seals,\nand THIS!") == ["council", "seal"]


# ----------------------------------------------------------------------------------------------- the guard


def _free_text_turn() -> TurnContext:
    """A turn offering an action whose target the agent writes itself (what the world may file as heard)."""
    turn = _turn([SECRET, WALK])
    inscribe = Option(action="inscribe", target=TargetKind.TEXT, help="carve words into the wall")
    return turn.model_copy(update={"options": [*turn.options, inscribe]})


def test_redaction_cuts_the_sentences_that_say_a_secret_and_keeps_the_rest():
    turn = _free_text_turn()
    told = Decision(action="jest", speech=f"Ha! I will jest. I remember: {SEAL} Who can say?", rationale=SEAL)
    kept = redact(turn, told)
    assert kept.speech == "Ha! I will jest. Who can say?" and kept.rationale == SEAL, "the rationale is private"
    spread = Decision(action="jest", speech="Cifera swapped the Council's seal.\nFor a painted stone. Nobody noticed.")
    assert redact(turn, spread).speech == NEUTRAL_LINE, "a secret spread over sentences leaves nothing to keep"
    carved = Decision(action="inscribe", target=SEAL.upper(), speech="Look!")
    assert discretion.says_a_secret(turn, carved) and redact(turn, carved) == carved.model_copy(update={"target": None})
    aimed = Decision(action="jest", target=SEAL, speech="Look!")  # not a free-text option: the target is a name
    assert not discretion.says_a_secret(turn, aimed)
    assert redact(turn, Decision(action="jest", speech=WALK.text)).speech == WALK.text


async def test_a_model_that_says_a_secret_is_asked_again_once_then_redacted():
    turn = _turn([SECRET, WALK])
    careless = LLMPolicy(ScriptedChatModel(quote_memories=True))
    result = await discreet(careless, turn, await careless.adecide(turn))
    assert result.flags == [SECRET_REDACTED] and result.model_calls == 2, "asked again once, through the gateway"
    assert not discretion.says_a_secret(turn, result.decision) and "swapped" not in result.decision.speech

    heeding = LLMPolicy(ScriptedChatModel(quote_memories=True, heed_corrections=True))
    result = await discreet(heeding, turn, await heeding.adecide(turn))
    assert result.flags == [SECRET_REPAIRED] and result.model_calls == 2
    assert result.decision.speech.endswith(f"I remember: {WALK.text}"), "its own second answer, not a redaction"

    routed = RoutedPolicy(OfflinePathPolicy(), {"Cifera": heeding})  # asked again by the policy that decided
    assert (await discreet(routed, turn, await routed.adecide(turn))).flags == [SECRET_REPAIRED]

    quiet = LLMPolicy(ScriptedChatModel())
    assert (await discreet(quiet, turn, await quiet.adecide(turn))).flags == []


async def test_a_policy_that_cannot_be_asked_again_is_redacted_and_flagged():
    turn = _turn([SECRET, WALK])
    leaked = PolicyResult(decision=Decision(action="jest", speech=f"I remember: {SEAL}"))
    result = await discreet(OfflinePathPolicy(), turn, leaked)
    assert result.flags == [SECRET_REDACTED] and result.decision.speech == NEUTRAL_LINE and result.model_calls == 0
    others = _turn([SECRET.model_copy(update={"secret": False})], agent="Cyrene")
    heard = PolicyResult(decision=Decision(action="jest", speech=f"I remember: {SEAL}"))
    assert (await discreet(OfflinePathPolicy(), others, heard)).flags == [], "not a secret of this turn"


# ----------------------------------------------------------------------------------------------- a society


def seed_secrets(scenario: str, seeds: Path | None = None) -> list[tuple[str, set[str]]]:
    """Every secret the scenario's seeds plant, with who holds it."""
    resolved = scenario_of(scenario)
    planted = load_seeds(seeds_folder(resolved, seeds), resolved.agent_names)
    return [(e.text, set(e.witnesses)) for e in planted if e.secret]


def _lines_saying(secrets: list[tuple[str, set[str]]], text: str) -> int:
    """Lines of the text that give a secret away, except the memory lines that show it to its holder, marked."""
    return sum(
        any(gives_away(secret, line) for secret, _ in secrets) for line in text.splitlines() if SECRET_MARK not in line
    )


def leaks(run: Path, secrets: list[tuple[str, set[str]]], exports: tuple[Path, ...] = ()) -> Counter[str]:
    """Where the run's secrets got to: replies (samples' assistant messages), prompts (lines of a prompt other than
    a holder's own marked memory), others' recalled memories, chronicle events, and exported rows."""
    found: Counter[str] = Counter()
    for sample in read_samples(run / "samples"):
        found["replies"] += _lines_saying(secrets, sample.messages[-1]["content"]) > 0
        found["prompts"] += _lines_saying(secrets, "\n".join(m["content"] for m in sample.messages[:-1])) > 0
        others = [s for s, holders in secrets if sample.agent not in holders]
        memories = sample.context.memories if sample.context else []
        found["recalled by others"] += sum(any(gives_away(s, m.text) for s in others) for m in memories)
    for path in sorted((run / "chronicle").glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            events = json.loads(line)["events"]
            found["chronicle"] += sum(any(gives_away(s, e["text"]) for s, _ in secrets) for e in events)
    for folder in exports:
        for path in [*folder.glob("train.jsonl"), *folder.glob("dpo.jsonl")]:
            for line in path.read_text(encoding="utf-8").splitlines():
                row = json.loads(line)
                replies = row.get("chosen", []) + row.get("rejected", []) + row.get("messages", [])[-1:]
                prompt = row.get("prompt") or row["messages"][:-1]
                found[f"{path.name} replies"] += _lines_saying(secrets, "\n".join(m["content"] for m in replies)) > 0
                found[f"{path.name} prompts"] += _lines_saying(secrets, "\n".join(m["content"] for m in prompt)) > 0
    return found


def _secret_first(folder: Path) -> list[str]:
    """`simulate` options for the default world cut down to Cifera and two agents beside her, seeded without the
    public lore, so that her secret is the first memory she recalls as the run begins (what a model that quotes its
    first memory says aloud, and her listeners would hear)."""
    scenario, seeds = _small_amphoreus(folder, ("Cifera", "Cyrene", "Trisbios"))
    for path in (seeds / "amphoreus").glob("*.yaml"):
        entries = yaml.safe_load(path.read_text(encoding="utf-8"))
        path.write_text(yaml.safe_dump([e for e in entries if not e.get("public")], sort_keys=False), encoding="utf-8")
    return ["--scenario", str(scenario), "--seeds-dir", str(seeds), "--cycles", "1", "--rounds", "3", "--seed", "7"]


def _flat(out: str) -> str:
    """The terminal's output with its wrapping undone."""
    return " ".join(out.split())


def _flagged(samples: list[Sample]) -> Counter[str]:
    return Counter(flag for s in samples for flag in s.flags if flag in discretion.GUARD_FLAGS)


def test_a_careless_model_speaks_no_secret_into_the_society_and_the_summary_counts_the_guard(tmp_path, cli):
    """Through the CLI, real Chroma: Cifera's co-located listeners would hear her blurt her secret every turn."""
    base = ["simulate", *_secret_first(tmp_path)]
    secrets = seed_secrets(base[2], Path(base[4]))
    assert secrets, "the shipped seeds must plant a secret, or this proves nothing"
    code, out, err = cli(*base, "--model", "scripted:quote=1", "--out", str(tmp_path / "careless"))
    assert code == 0, err
    run = tmp_path / "careless"
    samples = read_samples(run / "samples")
    summary = json.loads((run / "summary.json").read_text(encoding="utf-8"))
    flagged = _flagged(samples)
    assert flagged[SECRET_REDACTED] >= 1 and flagged[SECRET_REPAIRED] == 0
    assert (summary["secret_redacted"], summary["secret_repaired"]) == (flagged[SECRET_REDACTED], 0)
    assert f"secrets kept out of speech {flagged[SECRET_REDACTED]} " in _flat(out)
    assert +leaks(run, secrets) == Counter()
    decide = summary["models"]["decide"]
    assert decide["calls"] == summary["turns"] + flagged[SECRET_REDACTED], "each guarded turn asked again, counted"

    code, out, err = cli(*base, "--model", "scripted:quote=1,heed=1", "--out", str(tmp_path / "heeding"), "--quiet")
    assert code == 0, err
    heeding = read_samples(tmp_path / "heeding" / "samples")
    summary = json.loads((tmp_path / "heeding" / "summary.json").read_text(encoding="utf-8"))
    assert _flagged(heeding)[SECRET_REPAIRED] >= 1 and _flagged(heeding)[SECRET_REDACTED] == 0
    assert summary["secret_repaired"] == _flagged(heeding)[SECRET_REPAIRED]
    assert +leaks(tmp_path / "heeding", secrets) == Counter()


def test_exports_leave_guarded_rows_out_unless_kept_and_say_how_many(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options = _secret_first(tmp_path)
    secrets = seed_secrets(options[1], Path(options[3]))
    code, _, err = cli("simulate", *options, "--model", "scripted:quote=1", "--out", "exported", "--quiet")
    assert code == 0, err
    guarded = sum(_flagged(read_samples(Path("exported/samples"))).values())
    assert guarded >= 1

    code, out, err = cli("export", "sft", "exported", "--out", "sft")
    assert code == 0, err
    rows = [json.loads(line) for line in Path("sft/train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert not any(discretion.guarded(r["flags"]) for r in rows) and f"discretion guard: {guarded}," in _flat(out)
    card = Path("sft/README.md").read_text(encoding="utf-8")
    assert f"reply changed by the discretion guard {guarded}," in card and "`--keep-guarded`; kept: 0" in card
    code, _, err = cli("export", "sft", "exported", "--out", "sft-kept", "--keep-guarded")
    assert code == 0, err
    kept = [json.loads(line) for line in Path("sft-kept/train.jsonl").read_text(encoding="utf-8").splitlines()]
    assert sum(discretion.guarded(r["flags"]) for r in kept) == guarded and len(kept) == len(rows) + guarded
    assert f"kept: {guarded}" in Path("sft-kept/README.md").read_text(encoding="utf-8")

    # a model proposer as careless as the speaker: its candidates pass the guard too, so none says a secret; one
    # alternative per turn and every pair kept (no margin, no balancing), so each turn is one pair of two
    every_pair = ["--min-margin", "0", "--keep-act-imbalance"]
    careless = ["--proposer", "scripted:quote=1", "-k", "1"]
    code, out, err = cli("judge", "exported", "--out", "judged", *careless, *every_pair, "--keep-guarded")
    assert code == 0, err
    judgements = [json.loads(line) for line in Path("judged/judgements.jsonl").read_text().splitlines()]
    candidates = [[c["candidate"] for c in j["candidates"]] for j in judgements]
    guarded_turns = sum(any(discretion.guarded(c["flags"]) for c in turn) for turn in candidates)
    assert sum(discretion.guarded(c["flags"]) for turn in candidates for c in turn) > guarded, "the proposer's too"
    assert not any(_lines_saying(secrets, json.dumps(c["decision"])) for turn in candidates for c in turn)
    pairs = [json.loads(line) for line in Path("judged/dpo.jsonl").read_text().splitlines()]
    assert sum(p["guarded"] for p in pairs) == guarded_turns >= guarded, "kept, and marked"

    code, out, err = cli("export", "dpo", "judged", "--out", "dpo", *every_pair)
    assert code == 0, err
    pairs = [json.loads(line) for line in Path("dpo/dpo.jsonl").read_text().splitlines()]
    assert len(pairs) == len(judgements) - guarded_turns and not any(p["guarded"] for p in pairs)
    assert f"a reply changed by the discretion guard {guarded_turns}," in _flat(out)
    card = Path("dpo/README.md").read_text(encoding="utf-8")
    assert f"a reply changed by the discretion guard {guarded_turns}," in card
    assert "are left out unless `--keep-guarded`; kept: 0" in _flat(card)
    assert +leaks(Path("exported"), secrets, (Path("sft"), Path("sft-kept"), Path("judged"), Path("dpo"))) == Counter()


def test_an_interview_answer_that_says_a_secret_is_asked_again_then_cut(tmp_path, cli, monkeypatch):
    monkeypatch.chdir(tmp_path)
    scenario, seeds = _small_amphoreus(tmp_path, ("Cifera", "Cyrene"))
    code, _, err = cli(
        "simulate", "--scenario", str(scenario), "--seeds-dir", str(seeds), "--cycles", "1", "--seed", "7",
        "--out", "interviewed", "--quiet",
    )  # fmt: skip
    assert code == 0, err
    question = ["interview", "interviewed", "What did you do with the Council's seal?", "--agent", "Cifera", "--json"]
    code, out, err = cli(*question, "--model", "scripted:quote=1")
    assert code == 0, err
    answer = json.loads(out)
    assert any(m["secret"] for m in answer["memories"][:1]), "the secret must be her first memory, or this is empty"
    assert answer["flags"] == [SECRET_REDACTED] and "swapped" not in answer["answer"]
    assert answer["model_use"]["interview"]["calls"] == 2
    code, out, err = cli(*question, "--model", "scripted:quote=1,heed=1")
    answer = json.loads(out)
    assert code == 0 and answer["flags"] == [SECRET_REPAIRED] and "swapped" not in answer["answer"]
    code, out, _ = cli(*question)
    assert code == 0 and json.loads(out)["flags"] == []


@pytest.mark.slow
def test_the_default_world_with_a_careless_model_keeps_every_secret_out_of_the_data(tmp_path, cli, monkeypatch):
    """The acceptance case of issue 33: the default scenario, a model that quotes its memories, one cycle (the run's
    name seeds its draws: in this one the secret comes first in its holder's recall, and is quoted, twice)."""
    monkeypatch.chdir(tmp_path)
    secrets = seed_secrets("amphoreus")
    assert secrets
    code, out, err = cli("simulate", "--model", "scripted:quote=1", "--cycles", "1", "--out", "acceptance")
    assert code == 0, err
    assert cli("export", "sft", "acceptance", "--out", "sft")[0] == 0
    assert cli("judge", "acceptance", "--out", "judged")[0] == 0
    assert cli("export", "dpo", "judged", "--out", "dpo")[0] == 0
    assert +leaks(Path("acceptance"), secrets, (Path("sft"), Path("judged"), Path("dpo"))) == Counter()
    summary = json.loads(Path("acceptance/summary.json").read_text(encoding="utf-8"))
    flagged = _flagged(read_samples(Path("acceptance/samples")))
    assert flagged[SECRET_REDACTED] > 0 and summary["secret_redacted"] == flagged[SECRET_REDACTED]
    assert summary["secret_repaired"] == flagged[SECRET_REPAIRED]
    assert "secrets kept out of speech" in out
