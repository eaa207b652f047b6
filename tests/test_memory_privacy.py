"""Property: over random events, witnesses, queries and names, no heir ever recalls another heir's private record."""

from __future__ import annotations

import uuid

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amphoreus_graph.catalogs.scenario import packaged_scenarios
from amphoreus_graph.contracts.memory import MemoryEvent, Moment
from amphoreus_graph.memory.store import ChromaMemory
from amphoreus_graph.society.samples import read_samples
from tests.privacy_cases import ADVERSARIAL_NAMES, Case, as_case, run_case, society_pair

HEIRS = ["Aglaea", "Cyrene", "Phainon", "Castorice", "Mydeimos"]
WORDS = ["olive", "tide", "flame", "sky", "sea", "oath", "blade", "song", "gate", "vortex", "law", "stars"]

events_strategy = st.lists(
    st.tuples(
        st.lists(st.sampled_from(WORDS), min_size=2, max_size=6),
        st.sets(st.sampled_from(HEIRS), max_size=len(HEIRS)),
        st.booleans(),
    ),
    min_size=1,
    max_size=12,
)
queries_strategy = st.dictionaries(
    st.sampled_from(HEIRS), st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1
)


def _check_privacy(client, embedder, raw_events, raw_queries, k):
    memory = ChromaMemory(client, uuid.uuid4().hex[:12], HEIRS, embedder)
    events = [
        MemoryEvent(id=f"e{i}", text=" ".join(words), cycle=1, round=i, tick=i, witnesses=sorted(who), public=public)
        for i, (words, who, public) in enumerate(raw_events)
    ]
    memory.remember(events)
    visible = {h: {e.id for e in events if e.public or h in e.witnesses} for h in HEIRS}
    found = memory.recall({h: " ".join(q) for h, q in raw_queries.items()}, k, Moment(cycle=1, round=20, tick=20))
    for heir, memories in found.items():
        for m in memories:
            event_id, _, owner = m.id.partition("@")
            assert owner == heir or (m.public and owner == "*"), f"{heir} got {m.id}"
            assert event_id in visible[heir], f"{heir} recalled {event_id}, which it never witnessed"
        assert len(memories) == min(k, len(visible[heir]))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw_events=events_strategy, raw_queries=queries_strategy, k=st.integers(min_value=1, max_value=8))
def test_no_private_record_reaches_a_non_owner(chroma_client, embedder, raw_events, raw_queries, k):
    _check_privacy(chroma_client, embedder, raw_events, raw_queries, k)


# Adversarial names: identities that slug alike, NFC/NFD twins, scripts without Latin letters, reserved words.

names_strategy = st.one_of(
    st.sampled_from(ADVERSARIAL_NAMES),
    st.text(st.characters(categories=("L", "M", "N", "P", "S", "Zs")), min_size=1, max_size=8),
)


@st.composite
def adversarial_cases(draw: st.DrawFn) -> Case:
    heirs = draw(st.lists(names_strategy, min_size=2, max_size=6, unique=True))
    first, second = draw(st.lists(names_strategy, min_size=2, max_size=2, unique=True))
    events = draw(
        st.lists(
            st.tuples(
                st.integers(0, 1),
                st.lists(st.sampled_from([*WORDS, *heirs]), min_size=1, max_size=5).map(" ".join),
                st.frozensets(st.sampled_from(heirs)),
                st.booleans(),
            ),
            min_size=1,
            max_size=12,
        )
    )
    asking = draw(st.lists(st.sampled_from(heirs), min_size=1, unique=True))
    queries = {h: " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=3))) for h in asking}
    return as_case(society_pair(first, second), heirs, events, queries, draw(st.integers(1, 8)))


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=adversarial_cases())
def test_no_identity_can_reach_another_ones_private_records(chroma_client, embedder, case):
    """Two societies whose names may slug alike, heirs whose names differ in accents, spaces, punctuation, script
    or normal form (distinct identities here) or look reserved ("access", "public", "*", "PUBLIC"): no heir
    recalls anything but its own society's public records and its own, each flagged as what it is."""
    outcome = run_case(chroma_client, embedder, case)
    assert outcome.collisions == []
    assert outcome.leaks == []
    assert outcome.mislabelled == []
    assert outcome.missed == []


def test_through_the_cli_zoe_never_recalls_zoes_private_seed(tmp_path, cli):
    """Two heirs named "Zoé" and "Zoë" (both composed: é and ë) once slugged to one collection, so Zoé recalled
    Zoë's private seed. The real CLI, a real run: Zoë recalls it, Zoé never does."""
    raw = yaml.safe_load(packaged_scenarios()["trio"].read_text(encoding="utf-8"))
    raw.pop("seeds")  # the packaged trio's seeds folder; this run names its own with --seeds-dir
    names = {"Cyrene": "Zo\u00e9", "Phainon": "Zo\u00eb"}
    for heir in raw["heirs"]:
        heir["name"] = names.get(heir["name"], heir["name"])
        heir["relationships"] = {names.get(k, k): v for k, v in (heir.get("relationships") or {}).items()}
    scenario = tmp_path / "zoe.yaml"
    scenario.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    secret = "Zoë alone knows the Coreflame of Time sleeps under the ninth olive tree."
    seeds = tmp_path / "seeds" / raw["name"]
    seeds.mkdir(parents=True)
    (seeds / "private.yaml").write_text(
        yaml.safe_dump([{"text": secret, "agents": ["Zo\u00eb"], "importance": 10}], allow_unicode=True),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    code, out, err = cli(
        "simulate", "--scenario", str(scenario), "--seeds-dir", str(tmp_path / "seeds"), "--cycles", "1",
        "--rounds", "1", "--out", str(run), "--quiet",
    )  # fmt: skip
    assert code == 0, out + err
    recalled = {s.agent: [m.text for m in s.context.memories] for s in read_samples(run / "samples") if s.context}
    assert set(recalled) == {"Zo\u00e9", "Zo\u00eb", "Anaxagoras"}
    assert secret in recalled["Zo\u00eb"], "the owner recalls its seed (so this test can fail)"
    assert secret not in recalled["Zo\u00e9"] and secret not in recalled["Anaxagoras"]
