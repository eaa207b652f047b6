"""Fixtures, skips and slow marks for LangGraph's vendored store suites (README.md beside this file).

Every test ChromaStore does not run is named here with its reason; a name that matches no collected test fails
the run, so the list cannot drift from the files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pytest

from tests.langgraph_store_suite.embed_test_utils import CharacterEmbeddings
from tests.langgraph_store_suite.factory import MockerFixture

_NO_STORE = "tests LangGraph's own helper (get_text_at_path, AsyncBatchedBaseStore over a mock); builds no store"
_ONE_STORE = (
    "AsyncSqliteStore/AsyncPostgresStore refuse sync calls on their event loop; ChromaStore is one store whose sync "
    "calls work from any thread"
)
_SAME_TTL = (
    "sleeps 17 s to see a TTL refreshed by get and search, then lapse: what test_sqlite_ttl.py's ttl_refresh, "
    "search_with_ttl and asearch_refresh_ttl check on the same store in 2-8 s each (kept to hold the suite's time)"
)
SKIPS = {
    "test_reference_store.py::test_get_text_at_path": _NO_STORE,
    "test_reference_store.py::test_async_batch_store": _NO_STORE,
    "test_reference_store.py::test_async_batch_store_handles_cancellation": _NO_STORE,
    "test_sqlite_store.py::test_vector_store_initialization": "reads SQLite's tables through store.conn",
    "test_sqlite_store.py::test_nonnull_migrations": "checks SqliteStore.MIGRATIONS",
    "test_sqlite_store.py::test_escape_glob_literal": "tests a SQLite GLOB helper",
    "test_sqlite_store.py::test_namespace_match_pattern": "tests SqliteStore's regex helper",
    "test_sqlite_store.py::test_list_namespaces_prefix_uses_indexable_condition": "checks SqliteStore's SQL",
    "test_sqlite_store.py::test_sql_injection_vulnerability": (
        "expects SqliteStore's refusal of filter keys unsafe in SQL; ChromaStore's filters never reach SQL"
    ),
    "test_sqlite_store.py::test_filter_keys_with_hyphens_and_digits": (
        "reads dotted filter keys as JSON paths (SQLite's json_extract); ChromaStore reads keys as InMemoryStore "
        "and PostgresStore do: top-level fields, nested dicts for nesting"
    ),
    "test_sqlite_async_store.py::test_no_running_loop": _ONE_STORE,
    "test_sqlite_ttl.py::test_ttl_override_default": (
        "expects a plain get not to refresh a TTL unless the config sets refresh_on_read (SqliteStore's reading); "
        "ChromaStore refreshes by default, as LangGraph's TTLConfig documents and PostgresStore does"
    ),
    "test_postgres_store.py::test_escape_like_literal": "tests a Postgres LIKE helper",
    "test_postgres_store.py::test_namespace_match_pattern": "tests PostgresStore's regex helper",
    "test_postgres_store.py::test_nonnull_migrations": "checks PostgresStore.MIGRATIONS",
    "test_postgres_store.py::test_omit_expired_search_pagination": (
        "backdates rows with SQL inside the test; tests/test_langgraph_store_ttl.py pages past expired items"
    ),
    "test_postgres_async_store.py::test_no_running_loop": _ONE_STORE,
    "test_postgres_async_store.py::test_abatch_uses_single_pool_checkout": "counts psycopg pool checkouts",
    "test_postgres_store.py::test_store_ttl": _SAME_TTL,
    "test_postgres_async_store.py::test_store_ttl": _SAME_TTL,
    "test_postgres_async_store.py::test_omit_expired_search_pagination": (
        "backdates rows with SQL inside the test; tests/test_langgraph_store_ttl.py pages past expired items"
    ),
}
SLOW = {
    "test_sqlite_ttl.py": "waits for TTLs to run out (2-8 s a test)",
    "test_postgres_async_store.py::test_large_batches": "6,000 sync calls from 10 threads, each its own Chroma write",
    "test_postgres_async_store.py::test_search_sorting": "201 single puts in each of 6 variants (~15 s)",
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "flaky(retries): LangGraph's mark for timing tests (no retry plugin here)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    suite = [item for item in items if "langgraph_store_suite" in item.nodeid]
    names = {item: item.nodeid.split("langgraph_store_suite/", 1)[1].split("[")[0] for item in suite}
    for item, name in names.items():
        for table, mark in ((SKIPS, pytest.mark.skip), (SLOW, None)):
            reason = next((why for key, why in table.items() if name == key or name.startswith(key + "::")), None)
            if reason is not None:
                item.add_marker(mark(reason=reason) if mark else pytest.mark.slow)
    files = {name.split("::")[0] for name in names.values()}
    unknown = [key for key in SKIPS | SLOW if key.split("::")[0] in files and not _matches(key, names.values())]
    if unknown:
        raise pytest.UsageError(f"langgraph_store_suite/conftest.py names tests that do not exist: {unknown}")


def _matches(key: str, names: Iterable[str]) -> bool:
    return any(name == key or name.startswith(key + "::") for name in names)


@pytest.fixture
def mocker() -> Iterator[MockerFixture]:
    spies = MockerFixture()
    yield spies
    spies.stopall()


@pytest.fixture
def fake_embeddings() -> CharacterEmbeddings:
    """The Postgres suites' conftest fixture (the other suites define their own)."""
    return CharacterEmbeddings(dims=500)
