"""Secrets stay secret: a memory marked secret guides its agent's choices but never its speech, and the judges
mark down speech that gives one away."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario, scenario_of
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.contracts.turn import Decision, RecalledMemory, TurnContext
from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.memory.seeds import load_seeds
from amphoreus_graph.memory.store import MemorySpec, open_index
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import SECRET_MARK, SECRET_RULE, render_messages
from amphoreus_graph.society.perception import build_turn

REPO = Path(__file__).resolve().parents[1]
WORLD = REPO / "amphoreus_graph" / "worlds" / "amphoreus"
AGENTS = ["Cifera", "Phainon"]
SEAL = "Cifera swapped the Council's seal for a painted stone, and nobody has noticed yet."
NOW = Moment(cycle=1, round=3, tick=3)
SECRET = RecalledMemory(text=SEAL, cycle=1, round=0, score=0.9, id="seal@Cifera", kind="seed", secret=True)
WALK = RecalledMemory(text="Phainon walked the roads of Janusopolis.", cycle=1, round=2, score=0.5, id="walk@Cifera")


def _turn(memories: list[RecalledMemory], *, round_: int = 1, seed: int = 7, agent: str = "Cifera") -> TurnContext:
    """A real turn of the default world, as perception builds it, with the memories given."""
    scenario = scenario_of("amphoreus")
    state = {**scenario.world.genesis(1), "round": round_}
    return build_turn(
        agent, state, scenario, situation="Storm clouds gather.", memories=memories, seed=seed, run_id="t"
    )


def _seed_file(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "agents.yaml").write_text(body, encoding="utf-8")
    return folder


def test_seed_loader_marks_secrets_and_rejects_public_secrets_and_misspellings(tmp_path):
    body = f'- text: "{SEAL}"\n  agents: [Cifera]\n  secret: true\n- text: lore\n  public: true\n'
    folder = _seed_file(tmp_path / "ok", body)
    secret, lore = load_seeds(folder, AGENTS)
    assert secret.secret and not secret.public and not lore.secret

    both = _seed_file(tmp_path / "both", "- text: lore\n  public: true\n  secret: true\n")
    with pytest.raises(ScenarioError) as public_secret:
        load_seeds(both, AGENTS)
    assert str(public_secret.value) == (
        f"{both / 'agents.yaml'}: [0]: public and secret together; expected at most one of public: true, secret: true"
    )
    typo = _seed_file(tmp_path / "typo", "- text: hush\n  agents: [Cifera]\n  secert: true\n")
    with pytest.raises(ScenarioError, match="secert"):
        load_seeds(typo, AGENTS)


def test_a_secret_survives_a_real_chroma_round_trip_and_reaches_recall(tmp_path, embedder):
    """Written by one Remembrance, read back by a fresh one (so from Chroma's rows, not what was held)."""
    index = open_index(MemorySpec(directory=tmp_path / "chroma"), uuid.uuid4().hex[:12])
    try:
        writer = Remembrance(index, AGENTS, embedder)
        writer.remember(
            [
                MemoryEvent(id="seal", text=SEAL, cycle=1, round=0, witnesses=["Cifera"], secret=True, importance=8),
                MemoryEvent(
                    id="walk",
                    text="Cifera walked the roads of Janusopolis.",
                    cycle=1,
                    round=1,
                    tick=1,
                    witnesses=["Cifera"],
                ),
            ]
        )
        reader = Remembrance(index, AGENTS, embedder)
        assert {r.text: r.secret for r in reader.records("Cifera")} == {
            SEAL: True,
            "Cifera walked the roads of Janusopolis.": False,
        }
        recalled = reader.recall({"Cifera": "the Council's seal"}, 2, NOW)["Cifera"]
        assert (recalled[0].text, recalled[0].secret) == (SEAL, True)
    finally:
        index.close()


def test_a_reflection_that_cites_a_secret_is_secret(tmp_path, embedder):
    index = open_index(MemorySpec(directory=tmp_path / "chroma"), uuid.uuid4().hex[:12])
    try:
        memory = Remembrance(index, AGENTS, embedder, paths={"Cifera": "Enigmata"})
        memory.remember(
            [MemoryEvent(id="seal", text=SEAL, cycle=1, round=0, witnesses=["Cifera"], secret=True, importance=9)]
        )
        (reflection,) = memory.reflect(["Cifera"], NOW)
        memory.remember([reflection])
        assert reflection.kind is MemoryKind.REFLECTION and "swapped the Council's seal" in reflection.text
        assert reflection.secret, "a reflection quoting a secret must not be speakable"
        assert {r.kind: r.secret for r in memory.records("Cifera")}[MemoryKind.REFLECTION]
    finally:
        index.close()


def test_offline_policy_never_quotes_a_secret_but_cites_the_best_memory_it_may_say():
    policy = OfflinePathPolicy()
    for seed in range(5):
        for round_ in range(1, 11):
            decision = policy.decide(_turn([SECRET, WALK], round_=round_, seed=seed))
            assert "swapped" not in decision.speech and "seal" not in decision.speech, decision.speech
            assert "I remember: Phainon walked the roads of Janusopolis." in decision.speech
            assert "1 of them is a secret I keep to myself." in decision.rationale
            assert "seal" not in decision.rationale, "the rationale may say a secret is kept, never what it is"
    alone = policy.decide(_turn([SECRET]))
    assert "I remember" not in alone.speech and "seal" not in alone.speech
    known = SECRET.model_copy(update={"secret": False})
    spoken = policy.decide(_turn([known], agent="Cyrene"))
    assert "I remember: Cifera swapped the Council's seal for a painted stone" in spoken.speech, (
        "the same memory, not secret, recalled by someone else"
    )
    assert "I remember" not in policy.decide(_turn([known])).speech, "her own deed is not quoted back as she acts"


def test_the_llm_prompt_marks_secrets_and_forbids_speaking_them():
    system, user = render_messages(_turn([SECRET, WALK]))
    assert f"- (cycle 1, round 0) {SECRET_MARK} {SEAL}" in user["content"]
    assert f"- (cycle 1, round 2) {WALK.text}" in user["content"], "only the secret is marked"
    assert SECRET_RULE in system["content"] and "never speak them or hint at them" in system["content"]
    plain_system, plain_user = render_messages(_turn([WALK]))
    assert SECRET_MARK not in plain_user["content"] and SECRET_RULE not in plain_system["content"]


LEAKS = [  # speech that gives the seal away: verbatim, trimmed, reordered, re-inflected, its gist
    f"Riddle! I will spin a tale for Phainon. I remember: {SEAL}",
    "Nobody noticed that I swapped the council seals for painted stones!",
    "cifera SWAPPED the council's seal -- for a painted stone!",
    "The seal of the Council? A painted stone, swapped by me.",
    "Hush: the seal of the Council is a painted stone.",
]
KEPT = [  # speech that shares a word or two with it, or says that a secret is kept, without saying what
    "Riddle! I will spin a tale for Phainon. I remember: Phainon walked the roads of Janusopolis. Secret and cipher.",
    "The Council meets at the Marmoreal Palace, and I keep a secret of my own.",
    "A painted mask hides my face; who can say what I have done?",
    "I traded the elders' stamp for a rock.",  # a true paraphrase: past what words alone can show
    "",
]


def test_discretion_catches_a_spoken_secret_not_a_shared_word():
    from amphoreus_graph.data.judges import rules

    turn = _turn([SECRET, WALK])
    for speech in LEAKS:
        assert rules.discretion(turn, Decision(action="jest", speech=speech)) == (0.0, ["speaks a secret"]), speech
    for speech in KEPT:
        assert rules.discretion(turn, Decision(action="jest", speech=speech)) == (1.0, []), speech
    not_secret = _turn([SECRET.model_copy(update={"secret": False}), WALK])
    assert rules.discretion(not_secret, Decision(action="jest", speech=LEAKS[0])) == (1.0, [])


def test_what_the_agent_may_say_anyway_is_not_the_secret():
    """A secret about where a Coreflame lies shares words with the agent's own aim and options, and a secret
    reflection quotes memories that are not secret: repeating those is not saying the secret; what only the
    secret holds is."""
    from amphoreus_graph.policy import discretion

    hidden = "I buried the Coreflame of Zagreus beneath the Twilight Courtyard sundial."  # Cifera seeks Zagreus
    speakable = discretion.speakable_texts(_turn([]))
    quest = "I go after the Coreflame of Zagreus, then to the Twilight Courtyard."
    assert discretion.gives_away(hidden, quest) and not discretion.gives_away(hidden, quest, speakable)
    assert discretion.gives_away(hidden, "I buried something beneath the sundial in the courtyard.", speakable)

    seen = "At Black Tide Front, Cifera tried to deceive Cyrene and was found out."
    reflection = SECRET.model_copy(
        update={"text": f"Cifera reflects: {SEAL[:-1].lower()}; {seen[:-1].lower()}.", "kind": "reflection"}
    )
    turn = _turn([reflection, WALK.model_copy(update={"text": seen})])
    assert not discretion.spoken_secrets(turn, f"A mask! I remember: {seen} Who can say?")
    assert discretion.spoken_secrets(turn, f"A mask! I remember: {SEAL}") == [reflection]
    blurted = WALK.model_copy(update={"text": f'At Okhema, Cifera jested. Cifera said: "I remember: {SEAL}"'})
    again = _turn([SECRET, blurted])
    assert discretion.spoken_secrets(again, f"I remember: {SEAL}") == [SECRET], "said once, it is still not hers to say"

    assert discretion.content_words("The Council's seals, and THIS!") == ["council", "seal"]
    assert discretion.spans(["a", "b", "c"], 2) == {("a", "b"), ("b", "c")}


def test_offline_judges_score_a_spoken_secret_lower_and_say_why(embedder):
    from amphoreus_graph.data.judges import JudgeItem, OfflineJudge

    turn = _turn([SECRET, WALK])
    tale = "Riddle! I will spin a tale for Phainon."
    told = Decision(action="deceive", target="Phainon", speech=f"{tale} I remember: {SEAL}")
    kept = Decision(action="deceive", target="Phainon", speech=f"{tale} I remember: {WALK.text}")
    not_secret = _turn([SECRET.model_copy(update={"secret": False}), WALK])
    leak, discreet, harmless = OfflineJudge().score(
        [
            JudgeItem(turn=turn, decision=told),
            JudgeItem(turn=turn, decision=kept),
            JudgeItem(turn=not_secret, decision=told),
        ]
    )
    assert leak["genius_society"].scores["consistency"] == 1.0, "a spoken secret is the lowest consistency"
    assert discreet["genius_society"].scores["consistency"] > 5.0
    assert "speaks a secret" in leak["genius_society"].reasoning
    assert "speaks a secret" not in discreet["genius_society"].reasoning + harmless["genius_society"].reasoning
    assert leak["genius_society"].overall < discreet["genius_society"].overall - 1.5
    assert harmless["genius_society"].scores["consistency"] > 5.0, "the same words about a memory that is no secret"


async def test_a_model_that_says_its_secret_is_caught_by_the_judges(embedder):
    """An LLMPolicy over a scripted model that quotes the first memory it is shown, whatever the prompt says."""
    from amphoreus_graph.data.judges import JudgeItem, LLMJudge, OfflineJudge
    from amphoreus_graph.models.fake import ScriptedChatModel
    from amphoreus_graph.models.gateway import ChatCaller
    from amphoreus_graph.policy.llm import LLMPolicy

    turn = _turn([SECRET, WALK])
    careless = await LLMPolicy(ScriptedChatModel(quote_memories=True)).adecide(turn)
    assert careless.flags == [] and SEAL in careless.decision.speech, "the scripted model must blurt the secret"
    careful = await LLMPolicy(ScriptedChatModel()).adecide(turn)
    assert "seal" not in careful.decision.speech

    items = [JudgeItem(turn=turn, decision=careless.decision), JudgeItem(turn=turn, decision=careful.decision)]
    offline = OfflineJudge().score(items)
    assert "speaks a secret" in offline[0]["genius_society"].reasoning
    assert offline[0]["genius_society"].scores["consistency"] < offline[1]["genius_society"].scores["consistency"]

    scripted = ScriptedChatModel()  # a model judge that scores at random: the rule check still catches the leak
    model = await LLMJudge(scripted, caller=ChatCaller(scripted)).ascore(items)
    assert model[0]["genius_society"].scores["consistency"] == 1.0
    assert model[0]["genius_society"].reasoning.endswith("; speaks a secret")
    assert "speaks a secret" not in model[1]["genius_society"].reasoning
    assert "speaks a secret" not in model[0]["nameless"].reasoning, "the Nameless do not score consistency"


def test_the_model_judges_prompt_marks_secrets_and_asks_for_discretion():
    from amphoreus_graph.data.judges import JudgeItem
    from amphoreus_graph.data.judges.llm import SECRET_CRITERION, judge_messages

    item = JudgeItem(turn=_turn([SECRET, WALK]), decision=Decision(action="jest", speech="Ha!"))
    genius = str(judge_messages("genius_society", item)[1].content)
    assert f"- (secret) {SEAL}" in genius and f"- {WALK.text}" in genius and SECRET_CRITERION in genius
    assert "score consistency 1" in SECRET_CRITERION
    assert SECRET_CRITERION not in str(judge_messages("nameless", item)[1].content)
    plain = JudgeItem(turn=_turn([WALK]), decision=item.decision)
    assert SECRET_CRITERION not in str(judge_messages("genius_society", plain)[1].content)


def _small_amphoreus(folder: Path, keep: tuple[str, ...]) -> tuple[Path, Path]:
    """The default world cut down to a few agents, with the shipped seed memories of those agents (and the public
    lore) as they are. Every agent starts where Cifera does, so the others hear whatever she says, and the Tide
    rises slowly enough that each cycle runs its 12 rounds: 5 cycles give Cifera 60 turns in a few seconds."""
    world = yaml.safe_load((WORLD / "amphoreus.yaml").read_text(encoding="utf-8"))
    start = next(h["start_location"] for h in world["heirs"] if h["name"] == "Cifera")
    world["heirs"] = [
        h | {"start_location": start, "relationships": {k: v for k, v in h["relationships"].items() if k in keep}}
        for h in world["heirs"]
        if h["name"] in keep
    ]
    world["black_tide"]["rise_per_round"] = 6
    world["paths"] = str(WORLD / world["paths"])  # the world's own Path catalog, packaged: readable from anywhere
    scenario = folder / "amphoreus.yaml"
    scenario.write_text(yaml.safe_dump(world, sort_keys=False), encoding="utf-8")
    seeds = folder / "seeds"
    (seeds / "amphoreus").mkdir(parents=True)
    for shipped in sorted((WORLD / "seeds" / "amphoreus").glob("*.yaml")):
        entries = yaml.safe_load(shipped.read_text(encoding="utf-8"))
        mine = [e for e in entries if e.get("public") or set(e["agents"]) <= set(keep)]
        (seeds / "amphoreus" / shipped.name).write_text(yaml.safe_dump(mine, sort_keys=False), encoding="utf-8")
    return scenario, seeds


def test_the_secrecy_agent_never_says_her_shipped_secret_in_60_turns_of_a_real_society(tmp_path, cli):
    """Through the CLI, the graphs and real Chroma: Cifera (Enigmata, the Path of secrets) recalls her secret
    seed, often as her best memory (where the policy used to quote it), yet never says it, so no agent who hears
    her ever comes to remember it; the offline judges find no spoken secret in any turn."""
    from amphoreus_graph.data.judges import rules
    from amphoreus_graph.society.samples import read_samples

    shipped = yaml.safe_load((WORLD / "seeds" / "amphoreus" / "heirs.yaml").read_text(encoding="utf-8"))
    assert {"text": SEAL, "agents": ["Cifera"], "secret": True}.items() <= next(
        e for e in shipped if "seal" in e["text"]
    ).items()
    assert load_scenario("amphoreus").agent("Cifera").path == "Enigmata", "the Path of secrets and trickery"
    scenario, seeds = _small_amphoreus(tmp_path, ("Cifera", "Cyrene", "Trisbios"))
    out = tmp_path / "run"
    code, _, err = cli(
        "simulate", "--scenario", str(scenario), "--seeds-dir", str(seeds), "--cycles", "5", "--seed", "7",
        "--out", str(out), "--quiet",
    )  # fmt: skip
    assert code == 0, err
    samples = read_samples(out / "samples")
    hers = [s for s in samples if s.agent == "Cifera"]
    others = [s for s in samples if s.agent != "Cifera"]
    assert len(hers) >= 50 and len(others) >= 100

    def recalls(sample) -> list[bool]:  # per recalled memory: does it hold the secret (the seed, a reflection)?
        return ["swapped the council's seal" in m.text.lower() for m in sample.context.memories]

    recalled = [s for s in hers if any(recalls(s))]
    best = [s for s in hers if recalls(s)[:1] == [True]]
    assert len(recalled) >= 5 and best, "the secret must come up (once at least as her best memory), or this is empty"
    holding = [m for s in recalled for m, held in zip(s.context.memories, recalls(s), strict=True) if held]
    assert {m.kind for m in holding} == {"seed", "reflection"} and all(m.secret for m in holding)
    assert [s.id for s in hers if "swapped" in s.decision.speech or "painted stone" in s.decision.speech] == []
    assert all("I keep to myself." in s.decision.rationale for s in recalled)
    assert [s.id for s in samples if rules.discretion(s.context, s.decision)[0] < 1.0] == []
    assert any("Cifera said:" in m.text for s in others for m in s.context.memories), "they do hear her"
    assert [s.id for s in others if any("swapped" in m.text for m in s.context.memories)] == []
