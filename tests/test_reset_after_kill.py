"""A filing step cut short by a kill (its rows partly written: Chroma writes in several calls) or written whole
before the run's checkpoint said so: the resumed step finds its mark and writes again to its end, to the store an
uninterrupted run leaves; a world reset too, though doing it again over its own result would decay twice. A store
in any other state is still refused."""

from __future__ import annotations

import pytest

from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind
from amphoreus_graph.contracts.memory_seam import Retention, RetentionMode
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.index import RowChanges, Rows
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.memory.remembrance import Remembrance
from amphoreus_graph.society.ledger import file_checked, file_reset, tally_update

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


class Killed(Exception):
    """The process died here."""


class CutIndex(InMemoryIndex):
    """An index that dies in its `cut_at`-th write of rows from now, once that write's deletes and the first half
    of each owner's written rows are applied (Chroma deletes, then upserts in batches, each its own transaction)."""

    cut_at = 0

    def write(self, changes):
        self.cut_at -= 1
        if self.cut_at != 0:
            return super().write(changes)
        super().write([RowChanges(c.owner, deleted=c.deleted, written=_half(c.written)) for c in changes])
        raise Killed


def _half(rows: Rows) -> Rows:
    n = len(rows.ids) // 2
    return Rows(rows.ids[:n], rows.texts[:n], rows.metadatas[:n], list(rows.vectors[:n]))


def _cycle(embedder, index: InMemoryIndex) -> dict:
    """A cycle's memories (private records of several importances, public news); the checkpoint's state."""
    memory = Remembrance(index, AGENTS, embedder)
    lived = [
        MemoryEvent(id=f"e{i}-{who}", text=f"Deed {i} of {who}.", witnesses=[who], cycle=1, round=i % 3 + 1,
                    importance=i % 9 + 1)
        for i in range(6) for who in AGENTS
    ]  # fmt: skip
    news = [MemoryEvent(id="n1", text="The Titans stir.", witnesses=[], cycle=1, round=2, public=True)]
    memory.remember([*lived, *news])
    return tally_update(memory)


def _uninterrupted(embedder) -> tuple[tuple, dict]:
    index = InMemoryIndex("run")
    state = _cycle(embedder, index)
    done = file_reset(Remembrance(index, AGENTS, embedder), state, ECHO, RETENTION, 2)
    return done, Remembrance(index, AGENTS, embedder).dump()


@pytest.mark.parametrize("cut_at", [0, 1, 2], ids=["written-whole", "echo-cut", "reset-cut-mid-write"])
def test_a_reset_killed_before_its_checkpoint_is_done_again_to_the_same_end(embedder, cut_at):
    done, dump = _uninterrupted(embedder)
    index = CutIndex("run")
    state = _cycle(embedder, index)
    index.cut_at = cut_at  # the echo's write is the first, the reset's the second
    try:
        file_reset(Remembrance(index, AGENTS, embedder), state, ECHO, RETENTION, 2)
    except Killed:
        assert cut_at and Remembrance(index, AGENTS, embedder).dump() != dump
    assert file_reset(Remembrance(index, AGENTS, embedder), state, ECHO, RETENTION, 2) == done  # the resumed step
    assert Remembrance(index, AGENTS, embedder).dump() == dump, "nothing decayed or forgotten twice"
    assert done[0] == {"Aglaea": 3, "Mydei": 0, "Castorice": 7}


def test_a_store_changed_since_the_checkpoint_is_still_refused_at_the_reset(embedder):
    index = InMemoryIndex("run")
    state = _cycle(embedder, index)
    memory = Remembrance(index, AGENTS, embedder)
    memory.remember([MemoryEvent(id="late", text="A stranger's deed.", witnesses=["Aglaea"], cycle=1, round=3)])
    with pytest.raises(AmphoreusError, match="the run's checkpoint says"):
        file_reset(Remembrance(index, AGENTS, embedder), state, ECHO, RETENTION, 2)


def test_a_round_filing_cut_between_its_writes_is_written_to_its_end(embedder):
    """Half of a round's rows written when the kill falls: neither what the checkpoint says nor what the round
    files; the mark says the round began from the checkpoint's store, and the resumed round writes the rest."""
    events = [
        MemoryEvent(id=f"r{i}", text=f"Round deed {i}.", witnesses=AGENTS[i % 3 : i % 3 + 2], cycle=1, round=4)
        for i in range(12)
    ]

    def round_(index: InMemoryIndex, state: dict) -> tuple:
        memory = Remembrance(index, AGENTS, embedder)
        return file_checked(memory, state, "round", lambda: memory.remember(events))

    clean = InMemoryIndex("run")
    done = round_(clean, _cycle(embedder, clean))
    index = CutIndex("run")
    state = _cycle(embedder, index)
    index.cut_at = 1
    with pytest.raises(Killed):
        round_(index, state)
    assert Remembrance(index, AGENTS, embedder).tally().as_json() not in (
        state["memory_tally"],
        done[1]["memory_tally"],
    )
    assert round_(index, state) == done
    assert Remembrance(index, AGENTS, embedder).dump() == Remembrance(clean, AGENTS, embedder).dump()
    assert not [key for key in index._ticks if key.startswith("round:")], "the round's mark is gone once written"
