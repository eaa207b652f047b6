"""The memory conformance suite (amphoreus_graph.testing) over each shipped backend: the in-process index,
embedded Chroma, and a real `chroma run` server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from amphoreus_graph.memory.chroma_index import ChromaIndex, open_chroma
from amphoreus_graph.memory.inmemory_index import InMemoryIndex
from amphoreus_graph.testing import MemoryConformance, OpenIndex


class TestInMemoryIndex(MemoryConformance):
    @pytest.fixture
    def open_index(self) -> OpenIndex:
        store: dict[str, InMemoryIndex] = {}  # the "store" is this process: the same index for the same society
        return lambda society: store.setdefault(society, InMemoryIndex(society))


class TestEmbeddedChroma(MemoryConformance):
    @pytest.fixture
    def open_index(self, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIndex]:
        client, lock = open_chroma(tmp_path_factory.mktemp("chroma"))
        yield lambda society: ChromaIndex(client, society)
        if lock is not None:
            lock.release()


class TestLockedEmbeddedChroma(MemoryConformance):
    """Embedded Chroma as a run opens it, locked to this process: recall ranks the held vectors here instead of
    asking the index (held_vectors.py), and must answer as the index does."""

    @pytest.fixture
    def open_index(self, tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenIndex]:
        client, lock = open_chroma(tmp_path_factory.mktemp("chroma"))
        assert lock is not None and ChromaIndex(client, "probe", lock).exclusive
        yield lambda society: ChromaIndex(client, society, lock)
        lock.release()

    def test_records_written_by_another_remembrance_are_read_again(self, open_index, embedder):
        pytest.skip("a locked store has one user in one process: nothing else writes what it holds")


class TestChromaServer(MemoryConformance):
    @pytest.fixture
    def open_index(self, chroma_url: str) -> OpenIndex:
        client, _ = open_chroma(url=chroma_url)
        return lambda society: ChromaIndex(client, society)
