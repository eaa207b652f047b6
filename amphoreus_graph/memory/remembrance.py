"""Remembrance: what memory does (rating, ranking, reflection, retention, privacy by identity, access ticks),
over any RecordIndex (index.py) that stores it.

Privacy is structural: an agent's queries only ever touch its own index, which holds its private records, and the
society's public index (SHARED_HOLDER, a holder no agent's name can be), which holds each public record once for
every agent (owner PUBLIC). Writes are upserts of rows keyed by text (text_rows.py) holding
records keyed by event and owner, and retention marks what it has already carried, so replaying a round or a
cycle end after a crash changes nothing.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Concatenate, ParamSpec, TypeVar

import numpy as np
from numpy.typing import NDArray

from amphoreus_graph.catalogs.scenario import MemoryConfig
from amphoreus_graph.contracts.memory import MemoryEvent, MemoryKind, Moment
from amphoreus_graph.contracts.memory_seam import RecallRequest, Retention, RetentionMode
from amphoreus_graph.contracts.turn import RecalledMemory
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory.head_start import HeadStarts
from amphoreus_graph.memory.importance import ImportanceRater, ModelImportance
from amphoreus_graph.memory.index import RecordIndex, RowChanges, Rows
from amphoreus_graph.memory.records import PUBLIC, SHARED_HOLDER, MemoryRecord
from amphoreus_graph.memory.reflection import ModelReflector, OfflineReflector, Reflector, reflection_event, salient
from amphoreus_graph.memory.scoring import rank
from amphoreus_graph.memory.tally import Tally, not_as_left
from amphoreus_graph.memory.text_rows import HeldCollection, access_id
from amphoreus_graph.models.embedder import Embedder
from amphoreus_graph.models.gateway import metered

log = logging.getLogger(__name__)
RATINGS, REFLECTIONS = "ratings", "reflections"  # the head starts a filing claims
P = ParamSpec("P")
T = TypeVar("T")


def _serialised(method: Callable[Concatenate[Remembrance, P], T]) -> Callable[Concatenate[Remembrance, P], T]:
    """Run a method that reads or writes what is held under the memory's lock."""

    @functools.wraps(method)
    def locked(self: Remembrance, *args: P.args, **kwargs: P.kwargs) -> T:
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


class _BaseImportance:
    """Without a rater every witness keeps the event's base importance."""

    def rate(self, events: list[MemoryEvent]) -> dict[str, dict[str, float]]:
        return {e.id: {w: e.importance for w in e.witnesses} for e in events}

    rate_now = rate


class Remembrance:
    """One index per agent, holding one row (one vector) per distinct text, and the society's public index.

    Every event text is embedded once per batch. A public event is filed once, in the public index, in the same
    write as the round's private records; an agent's recall searches its own index and the public one, and ranks
    their rows together. (Until 2026-11-29 every agent's index held its own copy of each public record: a
    10,000-agent society wrote and, at each reset, deleted 10,000 rows a public event. Stores written so are read
    as they are: an agent's own copies count as public records it holds.) Records that share a
    text share a row (text_rows.py): identical vectors would degrade an HNSW index until a search misses exact
    matches. Recall over-fetches rows, ranks every record of them (see scoring.py), and asks for an exact scan
    if the index ever answers with fewer rows than it holds and was asked for. Each agent's records are held in
    this process once first read (one `get`) and kept in step with every write, so reflection and retention never
    re-read the index. An index that is this process's alone (`exclusive`: a locked embedded store) cannot go
    stale under it, so each agent's vectors are held too, as an index of that agent's rows alone, and recall ranks
    them here (held_vectors.py); any other index answers the similarity search, and recall asks it only for ids and
    similarities.
    """

    stores = True

    def __init__(
        self,
        index: RecordIndex,
        agents: list[str],
        embedder: Embedder,
        *,
        config: MemoryConfig | None = None,
        paths: dict[str, str] | None = None,
        rater: ImportanceRater | None = None,
        reflector: Reflector | None = None,
    ) -> None:
        self.index = index
        self.embedder = embedder
        self.config = config or MemoryConfig()
        self.paths = paths or {}
        self.rater: ImportanceRater = rater or _BaseImportance()
        self.reflector: Reflector = reflector or OfflineReflector(agents)
        self.agents = list(dict.fromkeys(agents))
        if SHARED_HOLDER in self.agents:
            raise AmphoreusError(
                f"memory: an agent named {SHARED_HOLDER!r}, the name of the society's public index; expected agent "
                "names without control characters"
            )
        self._known = set(self.agents)
        self._held: dict[str, HeldCollection] = {}  # agent -> its index as held here, once read
        self._ahead: Future[None] | None = None  # the last head start on a recall (anticipate)
        # A recall ranked ahead (anticipate_recall): what it answered, with the generation of what was held then.
        self._ranked_ahead: tuple[RecallRequest, int, dict[str, list[RecalledMemory]]] | None = None
        self._generation = 0  # bumped by every change to what is held: a recall ranked before one is stale
        self._head_starts = HeadStarts()  # a filing's model work, started ahead (prepare)
        self._expected: Tally | None = None  # what the next write must find held (expect)
        # Filing and reflecting may run at once (their model calls overlap); what is held is read and written
        # under this lock, never while a model is asked.
        self._lock = threading.RLock()

    @property
    def society(self) -> str:
        return self.index.society

    def close(self) -> None:
        self.index.close()

    @_serialised
    def drop(self) -> None:
        """Forget every memory of this society (a throwaway society's when done with it, or a `--fresh-memory`
        start); it goes on with empty indexes."""
        self.index.drop([*self.agents, SHARED_HOLDER])
        self._held = {}
        self._generation += 1

    def remember(self, events: list[MemoryEvent]) -> dict[str, float]:
        """File each event for each witness (public ones for every agent), in one write; returns the importance
        each agent gained from its private records of what it lived (its reflections do not count: they spend
        that importance)."""
        events = self._fileable(events)
        if not events:
            return {}
        self._head_starts.claim(RATINGS)  # a model's ratings started ahead land in the rater's cache
        ratings = self.rater.rate([e for e in events if not e.public])
        with self._lock:
            by_text, filed = self._records_for(events, ratings)
            self._generation += 1
            before = self._held_tally() if self._expected is not None else None
            changes = [self.file(agent, batch, by_text) for agent, batch in filed.items()]
            self._confirm(before)
            self.index.write(changes)
        gained = {
            agent: sum(r.importance for r, public in batch if not public and r.kind is not MemoryKind.REFLECTION)
            for agent, batch in filed.items()
        }
        return {agent: weight for agent, weight in gained.items() if weight}

    def prepare(self, events: list[MemoryEvent], reflecting: list[str], now: Moment) -> None:
        """Start the model work that filing `events` and reflecting for `reflecting` at `now` will ask for, in the
        background (head_start.py): `remember` and `reflect` claim it. Neither writes, and a reflection rests only on
        what was filed before `now`, so both may start as soon as the round is resolved. Only work that asks a model
        is started ahead (the offline rater and reflector cost microseconds); asking again for the same work, or
        for work already done, changes nothing."""
        if isinstance(self.rater, ModelImportance) and (rated := [e for e in self._fileable(events) if not e.public]):
            texts = tuple((e.id, e.text) for e in rated)
            self._head_starts.start(RATINGS, texts, functools.partial(self.rater.rate, rated))
        if reflecting and isinstance(self.reflector, ModelReflector):
            agents = list(reflecting)
            self._head_starts.start(
                REFLECTIONS, (tuple(agents), now.tick), functools.partial(self._reflect, agents, now)
            )

    def _fileable(self, events: Sequence[MemoryEvent]) -> list[MemoryEvent]:
        return [e for e in events if e.public or any(w in self._known for w in e.witnesses)]

    def _records_for(
        self, events: list[MemoryEvent], ratings: dict[str, dict[str, float]]
    ) -> tuple[dict[str, list[float]], dict[str, list[tuple[MemoryRecord, bool]]]]:
        """Each text's vector (the events embedded as one batch, as filing them embeds them), and each holder's
        records of the events (with whether each is public): an agent's own, SHARED_HOLDER's the public ones."""
        vectors = self.embedder.encode([e.text for e in events])
        by_text: dict[str, list[float]] = {}
        filed: dict[str, list[tuple[MemoryRecord, bool]]] = {}
        for event, vector in zip(events, vectors.tolist(), strict=True):
            by_text[event.text] = vector
            if event.public:
                filed.setdefault(SHARED_HOLDER, []).append((MemoryRecord.of(event, PUBLIC, event.importance), True))
                continue
            for agent in dict.fromkeys(event.witnesses):
                if agent in self._known:
                    filed.setdefault(agent, []).append((MemoryRecord.of(event, agent, ratings[event.id][agent]), False))
        return by_text, filed

    def file(
        self, agent: str, batch: list[tuple[MemoryRecord, bool]], vectors: Mapping[str, list[float]]
    ) -> RowChanges:
        """Hold records (each with whether it is a public copy) for an agent, and return the changes to its index
        that write them: the rows they change, each with all the records of its text; `vectors` has each new
        text's embedding. A record filed again keeps its last access (as a fresh read would)."""
        held = self._records_of(agent)
        touched: set[str] = set()
        for record, public in batch:
            before = held.records.get(record.id)
            touched |= held.put(record if before is None else _accessed(record, before.last_accessed), public)
        return self._row_changes(agent, touched, vectors)

    def _row_changes(self, agent: str, rows: set[str], vectors: Mapping[str, list[float]]) -> RowChanges:
        """What brings an agent's rows in the index in line with what is held: rows left empty go first, then the
        others (with their vector when this write has it, else metadata only). Deleting first keeps a replay after
        a crash exact: what retention already dropped never comes back."""
        held = self._held[agent]
        gone = sorted(r for r in rows if r not in held.rows)
        kept = sorted(r for r in rows if r in held.rows)
        fresh = [r for r in kept if held.text(r) in vectors]
        stale = [r for r in kept if held.text(r) not in vectors]
        held.drop_vectors(gone)
        for row in fresh:
            held.hold_vector(row, vectors[held.text(row)])
        return RowChanges(
            agent,
            deleted=gone,
            written=Rows(
                fresh,
                [held.text(r) for r in fresh],
                [held.metadata(r) for r in fresh],
                [vectors[held.text(r)] for r in fresh],
            ),
            updated=Rows(stale, metadatas=[held.metadata(r) for r in stale]),
        )

    def recall(
        self, queries: dict[str, str], k: int, now: Moment, pending: Sequence[MemoryEvent] = ()
    ) -> dict[str, list[RecalledMemory]]:
        """Each agent's k best memories for its query: its own records and public ones, never another's.

        `pending`: events not filed yet (a round written behind) are searched here, exactly, as if they were filed,
        rated as the rater rates without waiting on a model (a model's rating counts once they are filed). Read-only:
        the caller marks what was used with `touch` (the society does it with the round's writes). A recall ranked
        ahead for the same request (`anticipate_recall`), with nothing held changed since, is answered from there."""
        if (ahead := self._ahead) is not None:
            ahead.result()  # a head start in flight: its vectors (and perhaps this very answer) are coming
        request = RecallRequest(dict(queries), k, now, tuple(pending))
        with self._lock:
            ranked, self._ranked_ahead = self._ranked_ahead, None
            if ranked is not None and ranked[1] == self._generation and ranked[0].same(request):
                return ranked[2]
            return self._recall(request)

    def _recall(self, request: RecallRequest) -> dict[str, list[RecalledMemory]]:
        queries, k, now = request.queries, request.k, request.now
        found: dict[str, list[RecalledMemory]] = {h: [] for h in queries}
        agents = [h for h in queries if h in self._known]
        if not agents or k <= 0:
            return found
        # No count first: an index answers an oversized n with what it has.
        vectors = self.embedder.encode([queries[h] for h in agents]).tolist()
        unfiled = self._unfiled(request.pending)
        n = k * self.config.overfetch
        for agent, vector in zip(agents, vectors, strict=True):
            candidates = self._search(agent, vector, n)
            target = np.asarray(vector, dtype=np.float64)  # once an agent: the pending records' vectors are arrays
            waiting = [
                (r, public, v)
                for holder in (agent, SHARED_HOLDER)
                for r, public, v in unfiled.get(holder, [])
                if r.id not in self._held[holder].records
            ]
            candidates += [(r, float(np.dot(target, v))) for r, _, v in waiting]
            public = [self._held[agent].public, self._held[SHARED_HOLDER].public]
            public.append({r.id for r, is_public, _ in waiting if is_public})
            distinct = list({r.id: (r, similarity) for r, similarity in reversed(candidates)}.values())
            found[agent] = [
                _as_public(m, any(m.id in ids for ids in public)) for m in rank(distinct, now, self.config, k)
            ]
        return found

    def _search(self, agent: str, vector: list[float], n: int) -> list[tuple[MemoryRecord, float]]:
        """The records of the n rows nearest `vector` among the agent's own and the public index's, as one search of
        both would rank them (nearest first, ties by row id)."""
        near = [
            (row, similarity, holder)
            for holder in (agent, SHARED_HOLDER)
            for row, similarity in self._near(holder, vector, n)
        ]
        near.sort(key=lambda hit: (-hit[1], hit[0]))
        return [
            (self._held[holder].records[i], similarity)
            for row, similarity, holder in near[:n]
            for i in self._held[holder].rows.get(row, ())
        ]

    def _near(self, holder: str, vector: list[float], n: int) -> list[tuple[str, float]]:
        """One index's n rows nearest `vector`: ranked here over its held vectors when the index is this process's
        alone (held_vectors.py), else by the index (ranking every row exactly if it comes back short; a row written
        by another user is read then)."""
        held = self._records_of(holder)
        if held.searchable():
            return held.nearest(vector, n)
        hits = self.index.query(holder, vector, n)
        if len(hits) < min(n, len(self._fresh(holder, hits).rows)):
            hits = self.index.query(holder, vector, n, exact=True)
            self._fresh(holder, hits)
        return hits

    def _unfiled(
        self, pending: Sequence[MemoryEvent]
    ) -> dict[str, list[tuple[MemoryRecord, bool, NDArray[np.float64]]]]:
        """Each holder's records of events not filed yet (SHARED_HOLDER's the public ones), with whether each is
        public and its vector (float64, as a dot product of the lists would convert it: the same similarities,
        without converting a vector again for every agent who recalls it)."""
        events = self._fileable(pending)
        if not events:
            return {}
        by_text, filed = self._records_for(events, self.rater.rate_now([e for e in events if not e.public]))
        arrays = {text: np.asarray(vector, dtype=np.float64) for text, vector in by_text.items()}
        return {agent: [(r, public, arrays[r.text]) for r, public in batch] for agent, batch in filed.items()}

    def anticipate(self, texts: Callable[[], list[str]]) -> Future[None] | None:
        """Embed the texts a coming recall will likely need (its queries, the events it will search as pending), on
        a background thread while the model thinks: their vectors then wait in the embedder's cache. Only where a
        text's vector does not depend on what it is embedded with (`Embedder.batch_independent`), so a head start
        can never change a vector, and only one at a time. Failing costs only the head start: the recall embeds
        what it needs itself."""
        return self._start_ahead(lambda: self.embedder.encode(texts()))

    def anticipate_recall(self, request: Callable[[], RecallRequest]) -> Future[None] | None:
        """`anticipate` for a recall known exactly (the round after one just resolved): embed its queries and pending
        events, then rank it; `recall` asked the same, with nothing held changed since, answers from there. Ranked
        ahead only over an index this process has to itself (`exclusive`): no other writer can change what the
        answer rests on in between."""
        return self._start_ahead(functools.partial(self._recall_ahead, request), behind_others=True)

    def _start_ahead(self, work: Callable[[], object], *, behind_others: bool = False) -> Future[None] | None:
        """Hand work to the background lane: a guess only when the lane is free, an exact recall (`behind_others`)
        in any case, after what the lane is doing."""
        busy = self._ahead is not None and not self._ahead.done()
        if not self.embedder.batch_independent or (busy and not behind_others):
            return None
        self._ahead = _anticipation_lane(os.getpid()).submit(self._quietly, work)
        return self._ahead

    def _quietly(self, work: Callable[[], object]) -> None:
        try:
            work()
        except Exception as exc:  # a world that cannot frame a round it will never play, say
            log.debug("anticipating recall for %s: %s: %s", self.society, type(exc).__name__, exc)

    def _recall_ahead(self, request: Callable[[], RecallRequest]) -> None:
        asked = request()
        self.embedder.encode([*(e.text for e in self._fileable(asked.pending)), *asked.queries.values()])
        if self.index.exclusive:
            with self._lock:
                self._ranked_ahead = (asked, self._generation, self._recall(asked))

    @_serialised
    def touch(self, used: Mapping[str, Sequence[str]], now: Moment) -> None:
        """Mark private records as recalled at `now` (recency counts from last access); one write for all.

        `used`: each holder's ids of the records it used. A mark reaches only the holder's own record of that id
        (never another agent's record that happens to share the id): privacy by identity, as recall has it. A public
        copy is skipped: it has no last access of its own."""
        marks: list[str] = []
        self._generation += 1
        for agent, record_ids in used.items():
            if agent not in self._known:
                continue
            held = self._records_of(agent)
            for record_id in dict.fromkeys(record_ids):
                record = held.records.get(record_id)
                if record is not None and record_id not in held.public:
                    marks.append(access_id(agent, record_id))
                    held.records[record_id] = _accessed(record, now.tick)
        self.index.set_ticks(marks, now.tick)

    def _fresh(self, holder: str, hits: list[tuple[str, float]]) -> HeldCollection:
        """The holder's index as held here, read again if a hit row is not in it (written by someone else since)."""
        held = self._records_of(holder)
        if any(row not in held.rows for row, _ in hits):
            held = self._records_of(holder, reread=True)
        return held

    def _records_of(self, holder: str, *, reread: bool = False) -> HeldCollection:
        """One agent's index (or the public one, SHARED_HOLDER) as held here: read (with last access) on first use,
        then kept."""
        if reread or holder not in self._held:
            # Vectors only where they are searched here: an index this process has to itself.
            exclusive = self.index.exclusive
            rows = self.index.get(holder, vectors=exclusive)
            self._held[holder] = HeldCollection.read(
                holder,
                rows.ids,
                rows.texts,
                rows.metadatas,
                rows.vectors if exclusive else None,
                self.index.ticks,
                tuple(self.agents) if holder == SHARED_HOLDER else (),
            )
        return self._held[holder]

    @_serialised
    def tally(self) -> Tally:
        """How many records the society's memories hold, and their digest (tally.py); reads every agent's index
        not read yet, once."""
        return self._held_tally()

    def _held_tally(self) -> Tally:
        total = self._records_of(SHARED_HOLDER).tally()
        for agent in self.agents:
            total += self._records_of(agent).tally()
        return total

    @_serialised
    def expect(self, tally: Tally) -> None:
        """Have the next write check that the store holds `tally` (what the run's checkpoint says its last filing
        left) before it writes: a store that holds something else is refused in one line, unless that write finds
        everything it would file already there (the same filing, done before a restart and not checkpointed)."""
        self._expected = tally

    def _confirm(self, before: Tally | None) -> None:
        """`expect`'s check, once what the write would file is held and before anything is written."""
        expected, self._expected = self._expected, None
        if expected is None or before is None or before == expected:
            return
        if self._held_tally() == before:  # this filing was already in the store: it is only written again
            return
        raise AmphoreusError(not_as_left("memory store", self.society, before, expected))

    @_serialised
    def records(self, owner: str) -> list[MemoryRecord]:
        """Every private record of one agent, or (owner PUBLIC, when no agent has that name) every public record,
        sorted by id."""
        if owner in self._known:
            return self._records_of(owner).private()
        if owner == PUBLIC:
            return self.public_records()
        raise KeyError(owner)

    @_serialised
    def public_records(self) -> list[MemoryRecord]:
        """Every public record, sorted by id (the public index's, and the copies agents hold in older stores)."""
        holders = [SHARED_HOLDER, *self.agents]
        public = {r.id: r for holder in holders for r in self._records_of(holder).public_records()}
        return sorted(public.values(), key=lambda r: r.id)

    def settle(self) -> dict[str, Any]:
        """What the model calls of head starts no filing claimed cost (a run stopped between rounds), once they are
        done: the run adds it to its summary."""
        with metered() as meter:
            self._head_starts.claim_all()
        return meter.as_json()

    def reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        """Each named agent's reflection on its most salient memories from before `now` (all agents at once: a
        model's calls run together), for the caller to `remember`. Nothing is written here, and only what was filed
        before `now` counts as evidence, so reflecting may overlap the filing of the round at `now` (or start before
        it: `prepare`): a reflection does not depend on which got there first."""
        claimed = self._head_starts.claim(REFLECTIONS)
        if claimed is not None and claimed[0] == (tuple(agents), now.tick):
            reflections: list[MemoryEvent] = claimed[1]
            return reflections
        return self._reflect(agents, now)

    def _reflect(self, agents: list[str], now: Moment) -> list[MemoryEvent]:
        due = []
        with self._lock:
            for agent in agents:
                observed = [
                    r for r in self.records(agent) if r.kind is not MemoryKind.REFLECTION and r.created < now.tick
                ]
                if evidence := salient(observed, self.config.reflection_evidence):
                    due.append((agent, evidence))

        async def together() -> list[tuple[str, list[str]]]:
            asked = (self.reflector.areflect(a, self.paths.get(a, "Remembrance"), evidence) for a, evidence in due)
            return list(await asyncio.gather(*asked))

        insights = asyncio.run(together()) if due else []
        return [
            reflection_event(agent, insight, cites, evidence, now)
            for (agent, evidence), (insight, cites) in zip(due, insights, strict=True)
        ]

    @_serialised
    def carry_over(self, retention: dict[str, Retention], next_cycle: int) -> dict[str, int]:
        """Apply each agent's retention at a world reset (public news goes, public seeds stay); returns private
        records kept per agent."""
        kept: dict[str, int] = {}
        changes: list[RowChanges] = []
        self._generation += 1
        before = self._held_tally() if self._expected is not None else None
        forgotten_ticks: list[str] = []
        changes.append(self._row_changes(SHARED_HOLDER, _drop_news(self._records_of(SHARED_HOLDER)), {}))
        for agent in self.agents:
            rule = retention.get(agent, Retention(mode=RetentionMode.ALL))
            held = self._records_of(agent)
            records = held.private()
            if rule.mode is RetentionMode.ALL:
                keep = records
            else:
                # what this reset already carried (before a kill cut its write short) keeps its place
                ranked = sorted(records, key=lambda r: (r.carried_to != next_cycle, -r.importance, r.id))
                keep = ranked[: rule.keep] if rule.mode is RetentionMode.ECHOES else []
            forgotten = sorted({r.id for r in records} - {r.id for r in keep})
            touched = _drop_news(held) | {row for i in forgotten if (row := held.remove(i)) is not None}
            for record in keep:
                if record.carried_to < next_cycle and rule.mode is not RetentionMode.ALL:
                    decayed = record.model_copy(
                        update={"importance": max(1.0, record.importance * rule.decay), "carried_to": next_cycle}
                    )
                    touched |= held.put(decayed, public=False)
            changes.append(self._row_changes(agent, touched, {}))
            forgotten_ticks += [access_id(agent, i) for i in forgotten]
            if agent in retention:
                kept[agent] = len(keep)
        self._confirm(before)
        self.index.write(changes)
        self.index.forget_ticks(forgotten_ticks)
        return kept

    @_serialised
    def marked(self, mark: str) -> bool:
        """Whether `mark` is written in the store (society/ledger.py marks a filing step begun)."""
        return mark in self.index.ticks([mark])

    @_serialised
    def mark(self, mark: str) -> None:
        """Write `mark` to the store: a row of the access collection, where no record's tick is keyed like it."""
        self.index.set_ticks([mark], 1)

    @_serialised
    def unmark(self, mark: str) -> None:
        self.index.forget_ticks([mark])

    @_serialised
    def dump(self) -> dict[str, Any]:
        """Every record: each agent's own (by agent) and the public ones, sorted by id; for tests and inspection.
        Public records sit apart from the agents' because an agent may be named like the public owner."""
        return {
            "agents": {agent: [r.model_dump(mode="json") for r in self.records(agent)] for agent in self.agents},
            "public": [r.model_dump(mode="json") for r in self.public_records()],
        }


@functools.cache
def _anticipation_lane(pid: int) -> ThreadPoolExecutor:
    """One background thread per process for head starts on recall (a forked child makes its own)."""
    return ThreadPoolExecutor(1, thread_name_prefix="anticipate")


def _drop_news(held: HeldCollection) -> set[str]:
    """Let go of an index's public records other than seeds (a reset's news); returns the rows they sat in."""
    news = [r.id for r in held.public_records() if r.kind is not MemoryKind.SEED]
    return {row for record_id in news if (row := held.remove(record_id)) is not None}


def _as_public(memory: RecalledMemory, public: bool) -> RecalledMemory:
    """A recalled memory flagged public exactly when it is a public copy (not when its owner's name merely
    equals the public owner's)."""
    return memory if memory.public == public else memory.model_copy(update={"public": public})


def _accessed(record: MemoryRecord, tick: int) -> MemoryRecord:
    """The record, last accessed at `tick` if that is later than it says."""
    return record if tick <= record.last_accessed else record.model_copy(update={"last_accessed": tick})
