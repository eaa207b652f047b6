"""A world reset written to the memory store, then a kill before the run's checkpoint said so: the resumed
`end_cycle` finds the reset done and goes on from it; a store in any other state is still refused."""

from __future__ import annotations

import pytest

from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind
from amphoreus_graph.contracts.memory_seam import Retention, RetentionMode
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.society.ledger import carried_before, expect_tally, tally_update

AGENTS = ["Aglaea", "Mydei", "Castorice"]
RETENTION = {
    "Aglaea": Retention(mode=RetentionMode.ECHOES, keep=3, decay=0.5),
    "Mydei": Retention(mode=RetentionMode.NONE),
    "Castorice": Retention(mode=RetentionMode.ALL),
}
ECHO = MemoryEvent(
    id="echo-1", text="The cycle ended in fire.", witnesses=AGENTS, cycle=1, round=4, importance=8,
    kind=MemoryKind.CYCLE_ECHO,
)  # fmt: skip


def _cycle(embedder, index: InMemoryIndex) -> Remembrance:
    """A cycle's memories: private records of several importances, and public news."""
    memory = Remembrance(index, AGENTS, embedder)
    lived = [
        MemoryEvent(id=f"e{i}-{who}", text=f"Deed {i} of {who}.", witnesses=[who], cycle=1, round=i % 3 + 1,
                    importance=i % 9 + 1)
        for i in range(6) for who in AGENTS
    ]  # fmt: skip
    news = [MemoryEvent(id="n1", text="The Titans stir.", witnesses=[], cycle=1, round=2, public=True)]
    memory.remember([*lived, *news])
    return memory


def _end_cycle(memory: Remembrance, state: dict) -> tuple[dict[str, int], dict]:
    """What recurrence.end_cycle files, as it files it."""
    if (done := carried_before(memory, state, RETENTION, 2)) is not None:
        return done, tally_update(memory)
    expect_tally(memory, state)
    memory.remember([ECHO])
    return memory.carry_over(RETENTION, 2), tally_update(memory)


def test_a_reset_written_before_a_kill_is_found_done_and_not_applied_again(embedder):
    index = InMemoryIndex("run")
    state = tally_update(_cycle(embedder, index))  # the checkpoint before end_cycle
    kept, filed = _end_cycle(Remembrance(index, AGENTS, embedder), state)
    written = Remembrance(index, AGENTS, embedder).dump()

    resumed = Remembrance(index, AGENTS, embedder)  # the step runs again from the same checkpoint
    assert _end_cycle(resumed, state) == (kept, filed)
    assert Remembrance(index, AGENTS, embedder).dump() == written, "nothing decayed or forgotten twice"
    assert kept == {"Aglaea": 3, "Mydei": 0, "Castorice": 7}


def test_a_store_neither_before_nor_after_the_reset_is_still_refused(embedder):
    index = InMemoryIndex("run")
    memory = _cycle(embedder, index)
    state = tally_update(memory)
    memory.remember([MemoryEvent(id="late", text="A stranger's deed.", witnesses=["Aglaea"], cycle=1, round=3)])
    with pytest.raises(AmphoreusError, match="the run's checkpoint says"):
        _end_cycle(Remembrance(index, AGENTS, embedder), state)
