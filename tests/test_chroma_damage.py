"""A damaged embedded Chroma store: found by the project before Chroma opens it, never a traceback or a segmentation
fault inside Chroma. A vector index the store's write log holds whole is rebuilt from it, exactly; other damage (and
an index whose log was purged) is one `error:` line, exit 2, nothing changed; `--fresh-memory` rebuilds from the
run's history what it can, and refuses before discarding anything what it cannot.

Every case runs the CLI in a subprocess, as a user would, so that a crash inside Chroma's native code shows as a
negative exit status instead of taking the test run down."""

from __future__ import annotations

import os
import pickle
import random
import shutil
import sqlite3
import struct
import subprocess
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from amphoreus_graph.cli import app
from tests.conftest import REPO, digests

ARGS = ["--scenario", "trio", "--cycles", "1", "--rounds", "3", "--seed", "3", "--quiet"]
HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # hnswlib's persisted header


def _cli(*args: str, cwd: Path) -> tuple[int, str]:
    """The CLI in a process of its own, from `cwd` (relative paths, as a user types them)."""
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    done = subprocess.run(
        [sys.executable, "-m", "amphoreus_graph.cli", *args], cwd=cwd, env=env, capture_output=True, text=True
    )
    return done.returncode, done.stdout + done.stderr


def _one_error_line(code: int, output: str, *needles: str) -> str:
    assert code == 2, f"exit {code} (negative: killed by a signal)\n{output[-3000:]}"
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "Traceback" not in output, output[-3000:]
    for needle in needles:
        assert needle in errors[0], errors[0]
    return errors[0]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """A real run, its store's indexes written to disk: every case damages a copy of it."""
    run = tmp_path_factory.mktemp("finished") / "run"
    result = CliRunner().invoke(app, ["simulate", *ARGS, "--out", str(run)])
    assert result.exit_code == 0, result.stdout + result.stderr
    return run


@pytest.fixture
def copy(finished, tmp_path) -> Path:
    """The run under another parent, same name (so the same society in its own store)."""
    return Path(shutil.copytree(finished, tmp_path / "run"))


def _rows_segment(run: Path) -> Path:
    """The folder of the society's rows collection's HNSW index (the collection every memory is in)."""
    with sqlite3.connect(f"file:{run / 'memory' / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        (segment,) = db.execute(
            "SELECT s.id FROM segments s JOIN collections c ON s.collection = c.id "
            "WHERE s.scope = 'VECTOR' AND c.name LIKE '%.int.tailedrows'"
        ).fetchone()
    return run / "memory" / segment


def _header(segment: Path) -> tuple[int, int, int, int]:
    """Elements, bytes per element, where its vector starts, where its label starts."""
    fields = HEADER.unpack((segment / "header.bin").read_bytes())
    return fields[3], fields[4], fields[6], fields[5]


def _scramble_elements(start: str, end: str) -> Callable[[Path], None]:
    """Random bytes over one part of every element's record in data_level0.bin; the file keeps its size."""

    def damage(run: Path) -> None:
        segment = _rows_segment(run)
        elements, stride, vector_at, label_at = _header(segment)
        spans = {"count": 0, "neighbours": 4, "vector": vector_at, "label": label_at, "end": label_at + 8}
        data = bytearray((segment / "data_level0.bin").read_bytes())
        rng = random.Random(7)
        for element in range(elements):
            for at in range(element * stride + spans[start], element * stride + spans[end]):
                data[at] = rng.randrange(256)
        (segment / "data_level0.bin").write_bytes(bytes(data))

    return damage


def _zero_a_page(run: Path) -> None:
    path = run / "memory" / "chroma.sqlite3"
    data = bytearray(path.read_bytes())
    data[10 * 4096 : 11 * 4096] = bytes(4096)
    path.write_bytes(bytes(data))


def _garble_pickle(run: Path) -> None:
    path = _rows_segment(run) / "index_metadata.pickle"
    data = bytearray(path.read_bytes())
    data[40:80] = b"\xff" * 40
    path.write_bytes(bytes(data))


class _Planted:
    """A pickle that, if ever loaded as a pickle is by default, creates the folder named: code, not data."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[Callable[[str], None], tuple[str]]:
        return os.mkdir, (str(self.marker),)


def _plant_code_in_pickle(run: Path) -> None:
    marker = run.parent / "pickle-ran-code"
    (_rows_segment(run) / "index_metadata.pickle").write_bytes(pickle.dumps({"id_to_label": _Planted(marker)}))


def _truncate(name: str, keep: Callable[[int, int], int]) -> Callable[[Path], None]:
    """Cut a segment file to `keep(elements, stride)` bytes."""

    def damage(run: Path) -> None:
        segment = _rows_segment(run)
        elements, stride, _, _ = _header(segment)
        path = segment / name
        path.write_bytes(path.read_bytes()[: keep(elements, stride)])

    return damage


def _delete_segment(run: Path) -> None:
    shutil.rmtree(_rows_segment(run))


def _cut_pickle(run: Path) -> None:
    """The id map cut halfway, as `kill -9` leaves it in the middle of Chroma's write of it."""
    path = _rows_segment(run) / "index_metadata.pickle"
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _purge_log(run: Path) -> None:
    """The store's write log emptied, as `chroma utils vacuum` or a store made before the log was kept leaves it:
    a damaged index can then not be rebuilt from it."""
    with sqlite3.connect(run / "memory" / "chroma.sqlite3") as db:
        db.execute("DELETE FROM embeddings_queue")


def _scramble_lengths(run: Path) -> None:
    segment = _rows_segment(run)
    elements = _header(segment)[0]
    path = segment / "length.bin"
    data = bytearray(path.read_bytes())
    data[: 4 * elements] = random.Random(7).randbytes(4 * elements)
    path.write_bytes(bytes(data))


# (damage, the file named, what the line says). Before, a run resumed over them went on into a segmentation fault
# (neighbours, header), a 250-line traceback (page, pickles, segment, labels, counts) or quietly on other vectors
# than it filed (vectors, lengths, truncated files), or on a new, empty database (database deleted).
CASES = {
    "sqlite-zeroed-page": (_zero_a_page, "chroma.sqlite3", "SQLite finds it damaged"),
    "pickle-garbled": (_garble_pickle, "index_metadata.pickle", "not a readable id map"),
    "pickle-that-runs-code": (_plant_code_in_pickle, "index_metadata.pickle", "expected plain data only"),
    "segment-deleted": (_delete_segment, "memory/", "directory is missing"),
    "database-deleted": (lambda run: (run / "memory" / "chroma.sqlite3").unlink(), "chroma.sqlite3", "missing"),
    "neighbours-random": (_scramble_elements("neighbours", "vector"), "data_level0.bin", "past the"),
    "header-truncated": (_truncate("header.bin", lambda n, s: 60), "header.bin", "60 bytes, expected 100"),
    "counts-random": (_scramble_elements("count", "neighbours"), "data_level0.bin", "neighbours, at most"),
    "labels-random": (_scramble_elements("label", "end"), "data_level0.bin", "label"),
    "vectors-random": (_scramble_elements("vector", "label"), "data_level0.bin", "element 0"),
    "data-truncated": (_truncate("data_level0.bin", lambda n, s: s * n // 2), "data_level0.bin", "need"),
    "lengths-truncated": (_truncate("length.bin", lambda n, s: 2 * n), "length.bin", "need"),
    "lengths-random": (_scramble_lengths, "length.bin", "expected a positive number"),
    "links-truncated": (_truncate("link_lists.bin", lambda n, s: 2 * n), "link_lists.bin", "ends at element"),
}
FAST = {"sqlite-zeroed-page", "pickle-that-runs-code", "segment-deleted", "neighbours-random", "header-truncated"}


@pytest.mark.parametrize("case", [pytest.param(name, marks=() if name in FAST else pytest.mark.slow) for name in CASES])
def test_a_damaged_store_is_one_line_and_nothing_changes(copy, case):
    damage, file, needle = CASES[case]
    _purge_log(copy)
    damage(copy)
    before = digests(copy.parent)
    code, output = _cli("simulate", "--resume", "run", "--quiet", cwd=copy.parent)
    line = _one_error_line(code, output, file, needle, "is damaged", "--fresh-memory")
    assert digests(copy.parent) == before, line
    assert not (copy.parent / "pickle-ran-code").exists()


def _rows(run: Path) -> list[tuple[str, str, dict, bytes]]:
    """Every row of the society's rows collection, vector bytes and all, read through Chroma."""
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(run / "memory"), settings=Settings(anonymized_telemetry=False))
    (name,) = [c.name for c in client.list_collections() if c.name.endswith(".int.tailedrows")]
    got = client.get_collection(name).get(include=["documents", "metadatas", "embeddings"])
    rows = zip(got["ids"], got["documents"], got["metadatas"], got["embeddings"], strict=True)
    return sorted((i, d, dict(m), bytes(memoryview(e.astype("<f4")))) for i, d, m, e in rows)


REBUILT = {
    "pickle-cut": (_cut_pickle, "index_metadata.pickle"),
    "segment-deleted": (_delete_segment, "memory/"),
    "header-truncated": CASES["header-truncated"][:2],
    "neighbours-random": CASES["neighbours-random"][:2],
}


@pytest.mark.parametrize(
    "case", [pytest.param(name, marks=() if name == "pickle-cut" else pytest.mark.slow) for name in REBUILT]
)
def test_an_index_cut_mid_write_is_rebuilt_exactly_from_the_write_log(finished, copy, tmp_path, case):
    """What `kill -9` in the middle of Chroma's persist leaves (a cut id map, cut or scrambled index files, a lost
    folder): the store's write log holds every write, so the index is rebuilt from it, said in one warning; the
    run resumes, and every row reads back as it was, vector bytes and all."""
    reference = Path(shutil.copytree(finished, tmp_path / "reference" / "run"))
    damage, file = REBUILT[case]
    damage(copy)
    for command in (
        ("memory", "inspect", "run", "--agent", "Cyrene", "--query", "flame"),
        ("simulate", "--resume", "run"),
    ):
        code, output = _cli(*command, cwd=copy.parent)  # inspect reads a copy of the store; the resume repairs it
        assert code == 0 and file in output and "rebuilt from the store's write log" in output, output[-3000:]
    assert _rows(copy) == _rows(reference)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["neighbours-random", "header-truncated", "pickle-that-runs-code", "labels-random"])
def test_memory_inspect_on_a_damaged_store_is_one_line(copy, case):
    damage, file, needle = CASES[case]
    _purge_log(copy)
    damage(copy)
    before = digests(copy.parent)
    code, output = _cli("memory", "inspect", "run", "--agent", "Cyrene", "--query", "the flame", cwd=copy.parent)
    _one_error_line(code, output, file, needle)
    assert digests(copy.parent) == before


@pytest.mark.parametrize("case", ["neighbours-random", pytest.param("sqlite-zeroed-page", marks=pytest.mark.slow)])
def test_fresh_memory_sets_a_damaged_store_aside_and_rebuilds_it_as_the_run_was(finished, copy, case):
    damage, file, _ = CASES[case]
    _purge_log(copy)
    damage(copy)
    damaged = digests(copy / "memory")
    code, output = _cli("simulate", "--resume", "run", "--fresh-memory", "--quiet", cwd=copy.parent)
    assert code == 0, output[-3000:]
    assert "warning: run/memory/" in output and file in output and "moved to run/memory.damaged" in output, output
    for shard in ("samples/cycle-0001.jsonl", "chronicle/cycle-0001.jsonl"):
        assert (copy / shard).read_bytes() == (finished / shard).read_bytes(), shard
    assert digests(copy / "memory.damaged") == damaged, "set aside as it was"


def _add_a_collection_of_another_society(run: Path) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.PersistentClient(path=str(run / "memory"), settings=Settings(anonymized_telemetry=False))
    client.create_collection("am2.someone-else-0123456789abcdef.int.rows")


def _scramble_database(run: Path) -> None:
    (run / "memory" / "chroma.sqlite3").write_bytes(os.urandom(8192))


@pytest.mark.parametrize(
    ("prepare", "damage", "needle"),
    [
        (_add_a_collection_of_another_society, _scramble_elements("neighbours", "vector"), "holds other memories"),
        (lambda run: None, _scramble_database, "cannot tell"),
    ],
    ids=["holds-another-society", "unreadable-database"],
)
def test_fresh_memory_refuses_a_store_it_cannot_set_aside_before_discarding_anything(copy, prepare, damage, needle):
    prepare(copy)
    _purge_log(copy)
    damage(copy)
    before = digests(copy.parent)
    code, output = _cli("simulate", "--resume", "run", "--fresh-memory", "--quiet", cwd=copy.parent)
    _one_error_line(code, output, "--fresh-memory", needle)
    assert digests(copy.parent) == before, "the checkpoint, the shards and the store as they were"


CUT_WRITER = """
import sqlite3, sys, time
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute("PRAGMA cache_size=2")  # the transaction spills to the file: its journal is hot once the writer dies
db.execute("BEGIN")
db.execute("CREATE TABLE scratch (a)")
db.execute("INSERT INTO scratch SELECT randomblob(4000) FROM (WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL "
           "SELECT i + 1 FROM n WHERE i < 500) SELECT i FROM n)")
print("writing", flush=True)
time.sleep(60)
"""


def test_a_store_whose_writer_was_killed_mid_transaction_is_not_damaged(copy):
    """`kill -9` of a run in the middle of a Chroma write leaves SQLite a hot journal, which a read-only connection
    may not roll back (SQLITE_READONLY_ROLLBACK): the check rolls it back, as Chroma's own open would, and finds
    the store as it was before that transaction, not damaged (the random kills of test_resume.py met this)."""
    from amphoreus_graph.memory.chroma_check import DATABASE, check_store, collection_names

    memory = copy / "memory"
    before = collection_names(memory)
    writer = subprocess.Popen([sys.executable, "-c", CUT_WRITER, str(memory / DATABASE)], stdout=subprocess.PIPE)
    assert writer.stdout is not None and writer.stdout.readline().strip() == b"writing"
    writer.kill()
    writer.wait()
    assert (memory / f"{DATABASE}-journal").stat().st_size > 0
    check_store(memory)
    assert collection_names(memory) == before and not (memory / f"{DATABASE}-journal").exists()
    with sqlite3.connect(f"file:{memory / DATABASE}?mode=ro", uri=True) as db:
        assert not db.execute("SELECT name FROM sqlite_master WHERE name = 'scratch'").fetchall()


def test_a_store_that_passed_is_not_read_again_until_a_file_of_it_changes(copy, monkeypatch):
    """A run checks its store before it opens it, then again as it opens it: the second check of files that have
    not changed reads nothing. Damage that keeps a file's size and sets its modification time back is still found
    (its change time moved)."""
    from amphoreus_graph.memory import chroma_check

    memory = copy / "memory"
    _purge_log(copy)  # so that the damage below is refused, not rebuilt
    assert chroma_check.check_store(memory) == []
    reads = []
    monkeypatch.setattr(chroma_check, "_check", lambda directory: reads.append(directory) or [])
    assert chroma_check.check_store(memory) == [] and reads == []
    monkeypatch.undo()
    segment = _rows_segment(copy)
    before = (segment / "data_level0.bin").stat()
    _scramble_elements("neighbours", "vector")(copy)
    os.utime(segment / "data_level0.bin", ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(chroma_check.StoreDamaged, match=r"data_level0\.bin"):
        chroma_check.check_store(memory)


def test_a_read_copy_of_a_store_is_not_compacted_and_a_runs_open_is(copy, monkeypatch):
    """`memory inspect`, interviews and the report open a throwaway copy of the run's store: compacting its write log
    would be work thrown away with the copy. The run's own open compacts."""
    from amphoreus_graph.memory import chroma_index
    from amphoreus_graph.society.inspect import run_memory

    compacted: list[Path] = []
    monkeypatch.setattr(chroma_index, "compact_log", compacted.append)
    with run_memory(copy) as (scenario, memory):
        assert memory.records(scenario.agent_names[0]), "the copy was read"
    assert compacted == []
    client, lock = chroma_index.open_chroma(copy / "memory")
    client.close()  # type: ignore[attr-defined]
    assert lock is not None and compacted == [copy / "memory"]
    lock.release()


def _log(run: Path) -> list[tuple[str, str, int, bool]]:
    """The store's write log: (collection id, record id, operation, has a vector) in order."""
    with sqlite3.connect(f"file:{run / 'memory' / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        rows = db.execute("SELECT topic, id, operation, vector IS NOT NULL FROM embeddings_queue ORDER BY seq_id")
        return [(topic.rsplit("/", 1)[-1], i, op, bool(v)) for topic, i, op, v in rows]


def test_the_write_log_keeps_what_a_rebuild_needs_and_the_rebuild_stays_exact(tmp_path):
    """Opened again (here by `memory compact`), a store's write log loses what no rebuild needs (writes superseded,
    records forgotten at a reset): each live record keeps one write, with its vector; the file shrinks, and an index
    cut afterwards is rebuilt from the shorter log with every row as it was."""
    run = tmp_path / "copy" / "run"
    # ARGS with two cycles: a reset forgets records
    two_cycles = [("2" if flag == "--cycles" else value) for flag, value in zip(["", *ARGS], ARGS, strict=False)]
    code, output = _cli("simulate", *two_cycles, "--out", str(run), cwd=tmp_path)
    assert code == 0, output[-3000:]
    reference = Path(shutil.copytree(run, tmp_path / "reference" / "run"))
    with sqlite3.connect(f"file:{run / 'memory' / 'chroma.sqlite3'}?mode=ro", uri=True) as db:
        (rows,) = db.execute("SELECT id FROM collections WHERE name LIKE '%.int.tailedrows'").fetchone()
    before, size = _log(run), (run / "memory" / "chroma.sqlite3").stat().st_size
    assert any(c == rows and op == 3 for c, _, op, _ in before), "the reset forgot records"
    code, output = _cli("memory", "compact", "run", cwd=run.parent)  # an open compacts; this also shrinks the file
    assert code == 0 and f"{len(before)} → " in output, output
    after = _log(run)
    assert (run / "memory" / "chroma.sqlite3").stat().st_size < size
    assert not any(c == rows and op == 3 for c, _, op, _ in after) and set(after) < set(before)
    vector_writes = Counter(i for c, i, _, vector in after if vector and c == rows)
    assert set(vector_writes.values()) == {1} and sorted(vector_writes) == [row[0] for row in _rows(run)]
    _cut_pickle(run)
    code, output = _cli("simulate", "--resume", "run", cwd=run.parent)
    assert code == 0 and "rebuilt from the store's write log" in output, output[-3000:]
    assert _rows(run) == _rows(reference)


def test_writes_after_a_compacted_log_are_applied_and_kept(tmp_path):
    """A new write is numbered one past the log's last one: a compaction that removed the log's tail (here the
    deletes that ended it) would have new writes numbered at or below what the index applied, never applied. The
    last write stays, so what is written after a compaction is read back, in the same process and the next."""
    from amphoreus_graph.memory.chroma_index import SYNC_THRESHOLD, open_chroma, open_collection

    def write(ids: list[str], *, delete: bool = False) -> list[str]:
        client, lock = open_chroma(tmp_path / "memory")  # compacts what the last open left
        try:
            collection = open_collection(client, "rows", space="cosine")
            for i in ids:  # one write a call: past Chroma's sync threshold, so the index persists where it is
                if delete:
                    collection.delete(ids=[i])
                else:
                    collection.upsert(ids=[i], embeddings=[[1.0, 1.0 + len(i) + sum(map(ord, i))]])
            return sorted(collection.get()["ids"])
        finally:
            client.close()
            assert lock is not None
            lock.release()

    first = [f"a{n}" for n in range(3 * SYNC_THRESHOLD)]
    write(first)
    write(first[SYNC_THRESHOLD:], delete=True)  # the log now ends in deletes of records gone for good
    later = [f"b{n}" for n in range(3 * SYNC_THRESHOLD)]
    expected = sorted(first[:SYNC_THRESHOLD] + later)
    assert write(later) == expected
    assert write([]) == expected


def test_memory_compact_refuses_a_store_in_use_or_missing_in_one_line(copy):
    from amphoreus_graph.memory.chroma_index import StoreLock

    before = digests(copy)
    lock = StoreLock(copy / "memory")  # a live run holds it
    try:
        code, output = _cli("memory", "compact", "run", cwd=copy.parent)
    finally:
        lock.release()
    _one_error_line(code, output, "in use by another running simulation")
    (copy / "memory" / "chroma.sqlite3").rename(copy / "aside.sqlite3")
    code, output = _cli("memory", "compact", "run", cwd=copy.parent)
    _one_error_line(code, output, "chroma.sqlite3: no such file")
    (copy / "aside.sqlite3").rename(copy / "memory" / "chroma.sqlite3")
    assert digests(copy) == before
