"""What a memory backend must do, shipped with the package so a backend in another one runs it with one import:

    import pytest
    from amphoreus_graph.testing import MemoryConformance

    class TestMyIndex(MemoryConformance):
        @pytest.fixture
        def open_index(self):
            store = MyStore()
            return lambda society: MyIndex(store, society)

The suite needs pytest and hypothesis (`pip install amphoreus-graph[testing]`); docs/memory.md says more.
"""

from amphoreus_graph.testing.conformance import MemoryConformance, OpenIndex

__all__ = ["MemoryConformance", "OpenIndex"]
