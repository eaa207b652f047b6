"""Secrets stay secret: a memory marked secret guides its heir's choices but never its speech, and the judges
mark down speech that gives one away."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.memory.records import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.memory.seeds import load_seeds
from amphoreus_graph.memory.store import ChromaMemory, open_chroma
from amphoreus_graph.policy.base import RecalledMemory, TurnContext
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import SECRET_MARK, SECRET_RULE, render_messages
from amphoreus_graph.society.graph import scenario_of
from amphoreus_graph.society.perception import build_turn
from amphoreus_graph.society.world import World

HEIRS = ["Cifera", "Phainon"]
SEAL = "Cifera swapped the Council's seal for a painted stone, and nobody has noticed yet."
NOW = Moment(cycle=1, round=3, tick=3)
SECRET = RecalledMemory(text=SEAL, cycle=1, round=0, score=0.9, id="seal@Cifera", kind="seed", secret=True)
WALK = RecalledMemory(text="Phainon walked the roads of Janusopolis.", cycle=1, round=2, score=0.5, id="walk@Cifera")


def _turn(memories: list[RecalledMemory], *, round_: int = 1, seed: int = 7, heir: str = "Cifera") -> TurnContext:
    """A real turn of the default world, as perception builds it, with the memories given."""
    scenario = scenario_of("amphoreus")
    world = World.genesis(scenario, cycle=1)
    world.round = round_
    return build_turn(heir, world, scenario, situation="Storm clouds gather.", memories=memories, seed=seed, run_id="t")


def _seed_file(folder: Path, body: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "heirs.yaml").write_text(body, encoding="utf-8")
    return folder


def test_seed_loader_marks_secrets_and_rejects_public_secrets_and_misspellings(tmp_path):
    body = f'- text: "{SEAL}"\n  heirs: [Cifera]\n  secret: true\n- text: lore\n  public: true\n'
    folder = _seed_file(tmp_path / "ok", body)
    secret, lore = load_seeds(folder, HEIRS)
    assert secret.secret and not secret.public and not lore.secret

    both = _seed_file(tmp_path / "both", "- text: lore\n  public: true\n  secret: true\n")
    with pytest.raises(ScenarioError) as public_secret:
        load_seeds(both, HEIRS)
    assert str(public_secret.value) == (
        f"{both / 'heirs.yaml'}: [0]: public and secret together; expected at most one of public: true, secret: true"
    )
    typo = _seed_file(tmp_path / "typo", "- text: hush\n  heirs: [Cifera]\n  secert: true\n")
    with pytest.raises(ScenarioError, match="secert"):
        load_seeds(typo, HEIRS)


def test_a_secret_survives_a_real_chroma_round_trip_and_reaches_recall(tmp_path, embedder):
    """Written by one ChromaMemory, read back by a fresh one (so from Chroma's rows, not what was held)."""
    client, lock = open_chroma(tmp_path / "chroma")
    try:
        society = uuid.uuid4().hex[:12]
        writer = ChromaMemory(client, society, HEIRS, embedder)
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
        reader = ChromaMemory(client, society, HEIRS, embedder)
        assert {r.text: r.secret for r in reader.records("Cifera")} == {
            SEAL: True,
            "Cifera walked the roads of Janusopolis.": False,
        }
        recalled = reader.recall({"Cifera": "the Council's seal"}, 2, NOW)["Cifera"]
        assert (recalled[0].text, recalled[0].secret) == (SEAL, True)
    finally:
        if lock is not None:
            lock.release()


def test_a_reflection_that_cites_a_secret_is_secret(tmp_path, embedder):
    client, lock = open_chroma(tmp_path / "chroma")
    try:
        memory = ChromaMemory(client, uuid.uuid4().hex[:12], HEIRS, embedder, paths={"Cifera": "Enigmata"})
        memory.remember(
            [MemoryEvent(id="seal", text=SEAL, cycle=1, round=0, witnesses=["Cifera"], secret=True, importance=9)]
        )
        (reflection,) = memory.reflect(["Cifera"], NOW)
        assert reflection.kind is MemoryKind.REFLECTION and "swapped the Council's seal" in reflection.text
        assert reflection.secret, "a reflection quoting a secret must not be speakable"
        assert {r.kind: r.secret for r in memory.records("Cifera")}[MemoryKind.REFLECTION]
    finally:
        if lock is not None:
            lock.release()


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
    spoken = policy.decide(_turn([SECRET.model_copy(update={"secret": False})]))
    assert "I remember: Cifera swapped the Council's seal for a painted stone" in spoken.speech, (
        "the same memory, not secret"
    )


def test_the_llm_prompt_marks_secrets_and_forbids_speaking_them():
    system, user = render_messages(_turn([SECRET, WALK]))
    assert f"- (cycle 1, round 0) {SECRET_MARK} {SEAL}" in user["content"]
    assert f"- (cycle 1, round 2) {WALK.text}" in user["content"], "only the secret is marked"
    assert SECRET_RULE in system["content"] and "never speak them or hint at them" in system["content"]
    plain_system, plain_user = render_messages(_turn([WALK]))
    assert SECRET_MARK not in plain_user["content"] and SECRET_RULE not in plain_system["content"]
