"""Property: over random events, witnesses and queries, no heir ever recalls another heir's private record."""

from __future__ import annotations

import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from amphoreus_graph.memory.records import MemoryEvent, Moment
from amphoreus_graph.memory.store import ChromaMemory

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
