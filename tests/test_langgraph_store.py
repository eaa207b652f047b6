"""ChromaStore against LangGraph's documented BaseStore behaviour, with InMemoryStore as the reference.

Tests taking the `kind` fixture run on both stores: where they agree, ChromaStore matches the reference
implementation. Chroma-only tests cover what InMemoryStore does differently on purpose (created_at kept on
overwrite, vectors replaced on re-put, namespace checks in `batch`, values handed out as copies) or cannot do
(persistence, isolation of stores without a client, distance types, Chroma batches, reads that never filter in
Chroma). TTL and async batching have files of their own; LangGraph's own suites are in tests/langgraph_store_suite/.
"""

from __future__ import annotations

import gc
import uuid
from collections.abc import Callable
from datetime import UTC
from typing import Any, TypedDict

import chromadb
import pytest
from chromadb.config import Settings
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.memory import langgraph_store
from amphoreus_graph.memory.chroma_index import open_chroma
from amphoreus_graph.memory.langgraph_store import ChromaStore
from amphoreus_graph.memory.naming import store_collection

CLIENT = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
DOCS = {
    "py": "Python is a programming language for writing software",
    "bread": "Knead the dough and bake the sourdough bread in a hot oven",
    "cat": "The cat sleeps on the warm windowsill all afternoon",
}


@pytest.fixture(params=["chroma", "memory"])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make(kind: str) -> Callable[..., BaseStore]:
    """A fresh store of the test's kind; Chroma stores get their own collection in the shared client."""

    def build(index: dict[str, Any] | None = None) -> BaseStore:
        if kind == "memory":
            return InMemoryStore(index=index)  # type: ignore[arg-type]
        return ChromaStore(CLIENT, name=f"t-{uuid.uuid4().hex[:16]}", index=index)

    return build


@pytest.fixture
def index(embedder: Any) -> dict[str, Any]:
    """The real embedder as a plain callable, so both stores embed exactly the same way."""
    return {"dims": embedder.dims, "embed": lambda texts: embedder.encode(list(texts)).tolist(), "fields": ["text"]}


def chroma(index: dict[str, Any] | None = None, client: Any = CLIENT, name: str | None = None) -> ChromaStore:
    return ChromaStore(client, name=name or f"t-{uuid.uuid4().hex[:16]}", index=index)


def keys(items: list[Any]) -> list[str]:
    return [item.key for item in items]


# get / put / delete


def test_put_then_get_returns_the_item(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("users", "u1"), "prefs", {"theme": "dark", "sizes": [1, 2], "nested": {"a": None}})
    item = store.get(("users", "u1"), "prefs")
    assert item is not None
    assert (item.namespace, item.key) == (("users", "u1"), "prefs")
    assert item.value == {"theme": "dark", "sizes": [1, 2], "nested": {"a": None}}
    assert item.created_at.tzinfo is not None and item.created_at.utcoffset() == UTC.utcoffset(None)
    assert store.get(("users", "u1"), "missing") is None
    assert store.get(("users",), "prefs") is None  # namespaces are exact for get


def test_overwrite_replaces_value_and_moves_updated_at(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("docs",), "k", {"v": 1})
    first = store.get(("docs",), "k")
    store.put(("docs",), "k", {"v": 2})
    second = store.get(("docs",), "k")
    assert first is not None and second is not None
    assert second.value == {"v": 2}
    assert second.updated_at > first.updated_at


def test_overwrite_keeps_created_at() -> None:
    """As PostgresStore does; InMemoryStore resets created_at on every put."""
    store = chroma()
    store.put(("docs",), "k", {"v": 1})
    first = store.get(("docs",), "k")
    store.put(("docs",), "k", {"v": 2})
    second = store.get(("docs",), "k")
    assert first is not None and second is not None
    assert second.created_at == first.created_at == first.updated_at < second.updated_at


def test_delete_removes_the_item_and_tolerates_missing_ones(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("docs",), "a", {"v": 1})
    store.put(("docs",), "b", {"v": 2})
    store.delete(("docs",), "a")
    store.delete(("docs",), "never-there")
    assert store.get(("docs",), "a") is None
    assert keys(store.search(("docs",))) == ["b"]


@pytest.mark.parametrize(
    "namespace",
    [(), ("langgraph", "x"), ("a.b",), ("",), ("a", 1), ("nul\x00",)],
    ids=["empty", "langgraph-root", "period", "empty-label", "not-a-string", "nul"],
)
def test_put_rejects_invalid_namespaces(make: Callable[..., BaseStore], namespace: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidNamespaceError):
        make().put(namespace, "k", {"v": 1})


def test_reads_reject_invalid_labels(make: Callable[..., BaseStore]) -> None:
    store = make()
    with pytest.raises(InvalidNamespaceError):
        store.get(("a.b",), "k")
    with pytest.raises(InvalidNamespaceError):
        store.search(("a", ""))
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces(prefix=("a.b",))


def test_batch_checks_labels_too() -> None:
    """Namespaces are stored "."-joined, so ("a.b",) must never alias ("a", "b") through raw ops."""
    store = chroma()
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("a.b",), "k", {"v": 1})])
    assert store.list_namespaces() == []


# search: filters, scope, pagination

ITEMS: dict[str, dict[str, Any]] = {
    "a": {"color": "red", "score": 4.5, "tags": ["x", "y"], "meta": {"kind": "doc", "lang": "en"}},
    "b": {"color": "blue", "score": 5, "tags": ["x"], "meta": {"kind": "note"}},
    "c": {"color": "red", "score": 3, "meta": {"kind": "doc"}},
    "d": {"color": "green", "score": "7"},
}


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"color": "red"}, {"a", "c"}),
        ({"color": {"$eq": "blue"}}, {"b"}),
        ({"color": {"$ne": "red"}}, {"b", "d"}),
        ({"score": {"$gt": 4.5}}, {"b", "d"}),
        ({"score": {"$gte": 4.5}}, {"a", "b", "d"}),
        ({"score": {"$lt": 4.5}}, {"c"}),
        ({"score": {"$lte": 4.5}}, {"a", "c"}),
        ({"score": {"$gt": 3, "$lt": 5}}, {"a"}),
        ({"color": "red", "score": {"$gte": 4}}, {"a"}),
        ({"meta": {"kind": "doc"}}, {"a", "c"}),
        ({"tags": ["x", "y"]}, {"a"}),
        ({"missing": {"$ne": 1}}, {"a", "b", "c", "d"}),
        ({"color": "purple"}, set()),
    ],
)
def test_search_filters_on_value_fields(
    make: Callable[..., BaseStore], flt: dict[str, Any], expected: set[str]
) -> None:
    store = make()
    for key, value in ITEMS.items():
        store.put(("things",), key, value)
    assert set(keys(store.search(("things",), filter=flt))) == expected


def test_comparison_on_a_missing_field_matches_nothing() -> None:
    """InMemoryStore raises TypeError here; a database (PostgresStore) simply does not match."""
    store = chroma()
    store.put(("things",), "a", {"score": 1})
    store.put(("things",), "b", {"other": 1})
    assert keys(store.search(("things",), filter={"score": {"$gte": 0}})) == ["a"]
    with pytest.raises(ValueError, match="Unsupported operator"):
        store.search(("things",), filter={"score": {"$regex": "x"}})


def test_search_is_scoped_to_whole_label_prefixes(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("a",), "1", {"v": 1})
    store.put(("a", "b"), "2", {"v": 2})
    store.put(("a", "b", "c"), "3", {"v": 3})
    store.put(("ab",), "4", {"v": 4})
    store.put(("x", "a"), "5", {"v": 5})
    assert set(keys(store.search(("a",)))) == {"1", "2", "3"}
    assert set(keys(store.search(("a", "b")))) == {"2", "3"}
    assert set(keys(store.search(()))) == {"1", "2", "3", "4", "5"}
    assert store.search(("a", "b", "c", "d")) == []
    assert [item.namespace for item in store.search(("a", "b", "c"))] == [("a", "b", "c")]


def test_limit_and_offset_page_through_results(make: Callable[..., BaseStore]) -> None:
    store = make()
    for i in range(7):
        store.put(("docs",), f"k{i}", {"i": i, "even": i % 2 == 0})
    pages = [keys(store.search(("docs",), limit=3, offset=offset)) for offset in (0, 3, 6, 9)]
    assert [len(p) for p in pages] == [3, 3, 1, 0]
    assert sorted(k for p in pages for k in p) == [f"k{i}" for i in range(7)]
    assert len(store.search(("docs",))) == 7  # default limit is 10
    evens = [keys(store.search(("docs",), filter={"even": True}, limit=2, offset=o)) for o in (0, 2)]
    assert sorted(evens[0] + evens[1]) == ["k0", "k2", "k4", "k6"]


def test_filter_only_search_lists_newest_first() -> None:
    store = chroma()
    for key in ("old", "mid", "new"):
        store.put(("docs",), key, {"v": key})
    store.put(("docs",), "old", {"v": "touched"})
    results = store.search(("docs",))
    assert keys(results) == ["old", "new", "mid"]
    assert all(item.score is None for item in results)


# semantic search


def _put_docs(store: BaseStore) -> None:
    for key, text in DOCS.items():
        store.put(("docs", key), key, {"text": text, "kind": "food" if key == "bread" else "other"})


def test_query_ranks_by_meaning_with_scores(make: Callable[..., BaseStore], index: dict[str, Any]) -> None:
    store = make(index)
    _put_docs(store)
    results = store.search(("docs",), query="how do I write code?")
    assert keys(results)[0] == "py"
    scores = [item.score for item in results]
    assert all(isinstance(s, float) for s in scores)
    assert scores == sorted(scores, reverse=True)  # type: ignore[type-var]
    assert keys(store.search(("docs",), query="baking at home", limit=1)) == ["bread"]
    assert keys(store.search(("docs",), query="baking at home", offset=1, limit=1)) != ["bread"]
    assert keys(store.search(("docs",), query="write code", filter={"kind": "food"})) == ["bread"]
    assert keys(store.search(("docs", "cat"), query="write code")) == ["cat"]


def test_scores_agree_with_in_memory_store(index: dict[str, Any]) -> None:
    """Same embedder, same cosine similarity: Chroma's ranking and scores are the reference's."""
    ours, reference = chroma(index), InMemoryStore(index=index)  # type: ignore[arg-type]
    for store in (ours, reference):
        _put_docs(store)
    for query in ("pets at home", "software", "an oven"):
        got, want = ours.search((), query=query), reference.search((), query=query)
        assert keys(got) == keys(want)
        assert [item.score for item in got] == pytest.approx([item.score for item in want], abs=1e-4)


def test_each_indexed_field_is_searchable_and_the_best_one_scores(
    make: Callable[..., BaseStore], index: dict[str, Any]
) -> None:
    store = make(index)
    value = {"title": "Weekly report", "notes": ["the cat slept", "bread was baked"], "text": "unused"}
    store.put(("docs",), "multi", value, index=["title", "notes[*]"])
    store.put(("docs",), "whole", {"text": DOCS["py"]}, index=["$"] if isinstance(store, ChromaStore) else None)
    store.put(("docs",), "plain", {"text": DOCS["cat"]}, index=False)
    store.put(("alone",), "note", {"note": "the cat slept"}, index=["note"])
    top = store.search(("docs",), query="sleeping cat", limit=1)[0]
    assert top.key == "multi"  # max-pooled: an item scores as its best field
    assert top.score == pytest.approx(store.search(("alone",), query="sleeping cat")[0].score, abs=1e-4)
    assert keys(store.search(("docs",), query="baking bread"))[0] == "multi"
    assert keys(store.search(("docs",), query="programming language"))[0] == "whole"


def test_unindexed_items_follow_scored_ones_without_a_score(
    make: Callable[..., BaseStore], index: dict[str, Any]
) -> None:
    store = make(index)
    store.put(("docs",), "indexed", {"text": DOCS["py"]})
    store.put(("docs",), "plain", {"text": DOCS["py"]}, index=False)
    store.put(("docs",), "no-field", {"other": "value"})
    results = store.search(("docs",), query="programming")
    assert keys(results)[0] == "indexed" and results[0].score is not None
    assert sorted(keys(results)[1:]) == ["no-field", "plain"]
    assert [item.score for item in results[1:]] == [None, None]


def test_query_without_an_index_is_a_filter_only_search(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("docs",), "a", {"text": "alpha", "n": 1})
    store.put(("docs",), "b", {"text": "beta", "n": 2})
    results = store.search(("docs",), query="anything", filter={"n": 2})
    assert keys(results) == ["b"] and results[0].score is None


def test_reput_without_index_drops_old_vectors(index: dict[str, Any]) -> None:
    store = chroma(index)
    store.put(("docs",), "k", {"text": DOCS["cat"]})
    store.put(("docs",), "k", {"text": DOCS["cat"]}, index=False)
    assert [item.score for item in store.search(("docs",), query="cat")] == [None]
    store.delete(("docs",), "k")
    assert store.chroma.rows.count() == 0


def test_search_widens_until_the_filter_is_satisfied(index: dict[str, Any]) -> None:
    """The nearest vectors all fail the filter; the matching item is still found."""
    store = chroma(index)
    store.batch([PutOp(("docs",), f"cat{i}", {"text": f"a cat named {i}", "keep": False}) for i in range(40)])
    store.put(("docs",), "bread", {"text": DOCS["bread"], "keep": True})
    results = store.search(("docs",), query="a cat", filter={"keep": True}, limit=1)
    assert keys(results) == ["bread"] and results[0].score is not None


def test_a_distinct_text_is_found_first_among_hundreds_of_identical_ones(
    make: Callable[..., BaseStore], index: dict[str, Any]
) -> None:
    """Many identical vectors degrade Chroma's HNSW index: a search for the distinct item returned a duplicate
    and left the exact match out, and a limit of 1,000 returned 107 of 201 items. Each text is indexed once."""
    store = make(index)
    puts = [PutOp(("docs",), f"same{i:03d}", {"text": "A routine note about nothing much."}) for i in range(200)]
    if isinstance(store, InMemoryStore):  # its batch miscounts vectors when a batch repeats a text: one at a time
        for op in puts:
            store.batch([op])
    else:
        store.batch(puts)
    store.put(("docs",), "distinct", {"text": DOCS["bread"]})
    top = store.search(("docs",), query=DOCS["bread"], limit=1)
    assert keys(top) == ["distinct"] and top[0].score == pytest.approx(1.0, abs=1e-4)
    everything = store.search(("docs",), query=DOCS["bread"], limit=1000)
    assert len(everything) == 201 and len(set(keys(everything))) == 201
    assert keys(everything)[0] == "distinct" and all(item.score is not None for item in everything)
    pages = [keys(store.search(("docs",), query="a routine note", limit=60, offset=o)) for o in range(0, 240, 60)]
    assert sorted(k for page in pages for k in page) == sorted(keys(everything)), "paging loses and repeats none"


def test_items_sharing_a_text_share_one_row_per_namespace(index: dict[str, Any]) -> None:
    """One row per (namespace, text): it follows its items through overwrites and deletes, and a namespace's
    search never sees another namespace's items even where the text is the same."""
    store = chroma(index)
    note = "The cat sleeps on the warm windowsill all afternoon"
    store.batch([PutOp(("a",), f"k{i}", {"text": note}) for i in range(5)] + [PutOp(("b",), "k0", {"text": note})])
    assert store.chroma.rows.count() == 2
    assert sorted(keys(store.search(("a",), query="cat", limit=50))) == [f"k{i}" for i in range(5)]
    assert [(i.namespace, i.key) for i in store.search(("b",), query="cat", limit=50)] == [(("b",), "k0")]
    store.put(("a",), "k0", {"text": DOCS["bread"]})  # moves to a row of its own
    assert store.chroma.rows.count() == 3
    assert keys(store.search(("a",), query=DOCS["bread"], limit=1)) == ["k0"]
    store.batch([PutOp(("a",), f"k{i}", None) for i in range(1, 5)])
    assert store.chroma.rows.count() == 2
    assert keys(store.search(("a",), query="cat", limit=50)) == ["k0"]
    store.batch([PutOp(("a",), "k0", None), PutOp(("b",), "k0", {"text": note}, index=False)])
    assert store.chroma.rows.count() == 0 and [i.score for i in store.search((), query="cat")] == [None]


def test_wrong_dims_are_reported(embedder: Any) -> None:
    store = chroma({"dims": 12, "embed": lambda texts: embedder.encode(list(texts)).tolist()})
    with pytest.raises(ValueError, match="dims=12"):
        store.put(("docs",), "k", {"text": "hello"})


# list_namespaces

NAMESPACES = [("a", "b", "c"), ("a", "b", "d", "e"), ("a", "b", "d", "i"), ("a", "b", "f"), ("a", "c", "f"), ("z",)]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({}, sorted(NAMESPACES)),
        ({"prefix": ("a", "b"), "max_depth": 3}, [("a", "b", "c"), ("a", "b", "d"), ("a", "b", "f")]),
        ({"suffix": ("f",)}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"prefix": ("a", "*", "f")}, [("a", "b", "f"), ("a", "c", "f")]),
        ({"suffix": ("d", "*")}, [("a", "b", "d", "e"), ("a", "b", "d", "i")]),
        ({"prefix": ("a",), "suffix": ("c",)}, [("a", "b", "c")]),
        ({"prefix": ("*", "b", "d")}, [("a", "b", "d", "e"), ("a", "b", "d", "i")]),
        ({"max_depth": 1}, [("a",), ("z",)]),
        ({"limit": 2, "offset": 1}, sorted(NAMESPACES)[1:3]),
        ({"prefix": ("a", "b", "c", "d")}, []),
    ],
)
def test_list_namespaces(make: Callable[..., BaseStore], kwargs: dict[str, Any], expected: list[Any]) -> None:
    store = make()
    store.batch([PutOp(ns, "k", {"v": 1}) for ns in NAMESPACES])
    assert store.list_namespaces(**kwargs) == expected


def test_a_namespace_disappears_with_its_last_item() -> None:
    """InMemoryStore keeps listing emptied namespaces (and ones only read from); a database lists what it holds."""
    store = chroma()
    store.put(("a", "x"), "k", {"v": 1})
    store.put(("a", "y"), "k", {"v": 1})
    store.delete(("a", "x"), "k")
    assert store.list_namespaces(prefix=("a",)) == [("a", "y")]


# batch, abatch, async API


def test_batch_reads_see_the_store_before_its_writes(make: Callable[..., BaseStore]) -> None:
    store = make()
    store.put(("docs",), "old", {"v": 0})
    results = store.batch(
        [
            PutOp(("docs",), "new", {"v": 1}),
            GetOp(("docs",), "old"),
            GetOp(("docs",), "new"),
            SearchOp(("docs",)),
            ListNamespacesOp(match_conditions=(MatchCondition("prefix", ("docs",)),)),
            PutOp(("docs",), "old", None),
            PutOp(("docs",), "twice", {"v": 1}),
            PutOp(("docs",), "twice", {"v": 2}),
        ]
    )
    assert len(results) == 8
    assert results[0] is None and results[5] is None
    assert results[1].value == {"v": 0}  # type: ignore[union-attr]
    assert results[2] is None
    assert keys(results[3]) == ["old"]  # type: ignore[arg-type]
    assert results[4] == [("docs",)]
    assert store.get(("docs",), "old") is None
    assert store.get(("docs",), "twice").value == {"v": 2}  # type: ignore[union-attr]
    assert sorted(keys(store.search(("docs",)))) == ["new", "twice"]


def test_writes_larger_than_chromas_batch_are_chunked(index: dict[str, Any]) -> None:
    store = chroma(index)
    store.chroma.max_batch = 3
    store.batch([PutOp(("docs", str(i % 2)), f"k{i}", {"text": f"note {i}"}) for i in range(10)])
    assert len(store.search((), limit=20)) == 10
    assert store.chroma.rows.count() == 10
    store.batch([PutOp(("docs", str(i % 2)), f"k{i}", None) for i in range(10)])
    assert store.chroma.items.count() == 0 and store.chroma.rows.count() == 0


async def test_async_api(make: Callable[..., BaseStore], index: dict[str, Any]) -> None:
    store = make(index)
    await store.aput(("docs", "x"), "py", {"text": DOCS["py"]})
    await store.aput(("docs", "y"), "cat", {"text": DOCS["cat"]})
    item = await store.aget(("docs", "x"), "py")
    assert item is not None and item.value == {"text": DOCS["py"]}
    assert keys(await store.asearch(("docs",), query="kitten", limit=1)) == ["cat"]
    assert await store.alist_namespaces(prefix=("docs",)) == [("docs", "x"), ("docs", "y")]
    results = await store.abatch([GetOp(("docs", "y"), "cat"), PutOp(("docs", "y"), "cat", None)])
    assert results[0] is not None and results[1] is None
    await store.adelete(("docs", "x"), "py")
    assert await store.asearch(("docs",)) == []


async def test_async_embedding_functions_are_awaited(embedder: Any) -> None:
    async def embed(texts: list[str]) -> list[list[float]]:
        return embedder.encode(list(texts)).tolist()

    store = chroma({"dims": embedder.dims, "embed": embed, "fields": ["text"]})
    await store.aput(("docs",), "bread", {"text": DOCS["bread"]})
    await store.aput(("docs",), "py", {"text": DOCS["py"]})
    assert keys(await store.asearch(("docs",), query="an oven")) == ["bread", "py"]


# persistence, the langgraph dev factory, and a graph


def test_stores_without_a_client_share_nothing() -> None:
    """chromadb's in-memory clients share one store per process; each ChromaStore() gets a database of its own."""
    first, second = ChromaStore(), ChromaStore()
    first.put(("docs",), "k", {"v": 1})
    assert second.get(("docs",), "k") is None and second.list_namespaces() == []
    assert ChromaStore(open_chroma()[0]).get(("docs",), "k") is None  # the process-wide in-memory store neither
    assert first.get(("docs",), "k") is not None


def test_a_private_store_gives_its_memory_back_when_collected() -> None:
    store = ChromaStore()
    admin, database = chromadb.AdminClient(store.client.get_settings()), store.client.database
    assert admin.get_database(database)["name"] == database
    del store
    gc.collect()
    with pytest.raises(chromadb.errors.NotFoundError):
        admin.get_database(database)


def test_store_names_are_exact_identities() -> None:
    """Any Unicode name; names differing only in an accent's encoding are two stores (naming.store_collection)."""
    tag = uuid.uuid4().hex[:8]
    composed, decomposed = chroma(name=f"{tag} Zoé"), chroma(name=f"{tag} Zoe\u0301")
    composed.put(("docs",), "k", {"v": 1})
    assert decomposed.get(("docs",), "k") is None
    assert composed.chroma.items.name == store_collection(f"{tag} Zoé", "items")
    assert composed.chroma.rows.name == store_collection(f"{tag} Zoé", "rows")


def test_values_handed_out_are_copies() -> None:
    """InMemoryStore hands out the dict it holds; a database cannot be changed by editing what it returned."""
    store = chroma()
    value = {"nested": {"a": 1}}
    store.put(("docs",), "k", value)
    value["nested"]["a"] = 2
    got = store.get(("docs",), "k")
    assert got is not None and got.value == {"nested": {"a": 1}}
    got.value["nested"]["a"] = 3
    store.search(("docs",))[0].value["nested"]["a"] = 4
    assert store.get(("docs",), "k").value == {"nested": {"a": 1}}  # type: ignore[union-attr]


def test_reads_never_filter_in_chroma(index: dict[str, Any]) -> None:
    """Chroma evaluates `where` by scanning; reads go by the catalog, and a query names its prefix's rows by id."""
    store = chroma(index)
    for ns in (("a", "x"), ("a", "y"), ("b",)):
        store.put(ns, "cat", {"text": DOCS["cat"], "kind": ns[-1]})
    calls: list[tuple[str, dict[str, Any]]] = []

    def recorded(name: str, real: Callable[..., Any]) -> Callable[..., Any]:
        def call(*args: Any, **kwargs: Any) -> Any:
            calls.append((name, kwargs))
            return real(*args, **kwargs)

        return call

    for collection in (store.chroma.items, store.chroma.rows):
        for method in ("get", "query"):
            setattr(collection, method, recorded(method, getattr(collection, method)))
    assert store.get(("a", "x"), "cat") is not None
    assert keys(store.search(("a",), filter={"kind": "y"})) == ["cat"]
    assert store.list_namespaces(prefix=("a",)) == [("a", "x"), ("a", "y")]
    assert len(store.search(("a",), query="a sleepy cat")) == 2
    assert [name for name, _ in calls] == ["query"]
    assert "where" not in calls[0][1] and len(calls[0][1]["ids"]) == 2


def test_rows_left_by_a_crash_are_dropped_on_open(index: dict[str, Any]) -> None:
    """Rows are written before their items: a crash between leaves rows no item holds, deleted when the store opens."""
    name = f"t-{uuid.uuid4().hex[:16]}"
    store = chroma(index, name=name)
    store.put(("docs",), "cat", {"text": DOCS["cat"]})
    store.chroma.rows.upsert(ids=["orphan"], documents=["never filed"], embeddings=[[0.5] * index["dims"]])
    reopened = chroma(index, name=name)
    assert reopened.chroma.rows.get()["ids"] == store.chroma.rows.get()["ids"]
    assert reopened.chroma.rows.count() == 1
    assert keys(reopened.search(("docs",), query="cat")) == ["cat"]


VECTORS = {"east": [1.0, 0.0], "north": [0.0, 2.0], "diagonal": [3.0, 3.0]}


@pytest.mark.parametrize(
    ("distance", "expected"),
    [
        ("cosine", {"east": 0.6, "north": 0.8, "diagonal": 0.98995}),
        ("inner_product", {"east": 0.6, "north": 1.6, "diagonal": 4.2}),
        ("l2", {"east": -0.89443, "north": -1.34164, "diagonal": -3.25576}),
    ],
)
def test_each_distance_type_scores_as_postgres_store_does(distance: str, expected: dict[str, float]) -> None:
    """cosine similarity, inner product, minus the Euclidean distance (query = [0.6, 0.8])."""

    def embed(texts: list[str]) -> list[list[float]]:
        return [VECTORS.get(text, [0.6, 0.8]) for text in texts]

    store = chroma({"dims": 2, "embed": embed, "fields": ["text"], "distance_type": distance})
    for key in VECTORS:
        store.put(("docs",), key, {"text": key})
    results = store.search(("docs",), query="the query")
    assert {item.key: item.score for item in results} == pytest.approx(expected, abs=1e-4)
    assert keys(results) == sorted(expected, key=lambda k: -expected[k])


def test_a_store_is_opened_with_the_distance_it_was_made_with() -> None:
    name = f"t-{uuid.uuid4().hex[:16]}"
    chroma({"dims": 2, "embed": lambda texts: [[1.0, 0.0]] * len(texts), "distance_type": "l2"}, name=name)
    with pytest.raises(AmphoreusError, match="ranks in Chroma's 'l2' space; expected 'cosine'"):
        chroma({"dims": 2, "embed": lambda texts: [[1.0, 0.0]] * len(texts)}, name=name)
    with pytest.raises(ValueError, match="distance_type 'hamming'"):
        chroma({"dims": 2, "embed": lambda texts: [], "distance_type": "hamming"})


def test_text_fields_is_an_other_name_for_fields(index: dict[str, Any]) -> None:
    """SqliteStore calls the index config's `fields` `text_fields`; either works."""
    store = chroma({"dims": index["dims"], "embed": index["embed"], "text_fields": ["title"]})
    store.put(("docs",), "py", {"title": DOCS["py"], "text": DOCS["cat"]})
    store.put(("docs",), "cat", {"title": DOCS["cat"], "text": DOCS["py"]})
    assert keys(store.search(("docs",), query="programming")) == ["py", "cat"]


def test_items_survive_a_new_client(tmp_path: Any, embedder: Any) -> None:
    settings = Settings(anonymized_telemetry=False)
    index = {"dims": embedder.dims, "embed": embedder, "fields": ["text"]}
    first = ChromaStore(chromadb.PersistentClient(path=str(tmp_path), settings=settings), index=index)
    first.put(("docs",), "cat", {"text": DOCS["cat"]})
    created = first.get(("docs",), "cat").created_at  # type: ignore[union-attr]
    second = ChromaStore(chromadb.PersistentClient(path=str(tmp_path), settings=settings), index=index)
    item = second.search(("docs",), query="a sleepy cat")[0]
    assert (item.key, item.created_at) == ("cat", created) and item.score is not None


def test_make_store_uses_the_store_dir_and_the_default_embedder(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch, embedder: Any
) -> None:
    monkeypatch.setenv("AMPHOREUS_STORE_DIR", str(tmp_path / "store"))
    store = langgraph_store.make_store()
    try:
        assert langgraph_store.make_store() is store  # one store (and one lock) per process and directory
        assert store._sweeper._thread is not None and store._sweeper._thread.is_alive()  # langgraph dev runs none
        store.put(("docs",), "py", {"text": DOCS["py"]})
        store.put(("docs",), "bread", {"text": DOCS["bread"]})
        assert keys(store.search(("docs",), query="coding")) == ["py", "bread"]
        assert (tmp_path / "store" / "amphoreus.lock").exists()
    finally:
        store.stop_ttl_sweeper()
        langgraph_store._persistent_store.cache_clear()


class State(TypedDict):
    user: str
    fact: str
    recalled: list[str]


def remember(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    runtime.store.put(("memories", state["user"]), uuid.uuid4().hex, {"text": state["fact"]})
    return {}


def recall(state: State, runtime: Runtime[None]) -> dict[str, Any]:
    assert runtime.store is not None
    found = runtime.store.search(("memories", state["user"]), query="what food do they like?", limit=1)
    return {"recalled": [item.value["text"] for item in found]}


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_graph_remembers_through_the_store(index: dict[str, Any], mode: str) -> None:
    store = chroma(index)
    store.put(("memories", "u1"), "old", {"text": "They live in a flat by the sea"})
    builder = StateGraph(State)
    builder.add_node("remember", remember)
    builder.add_node("recall", recall)
    builder.add_edge(START, "remember")
    builder.add_edge("remember", "recall")
    builder.add_edge("recall", END)
    graph = builder.compile(store=store)
    payload: State = {"user": "u1", "fact": "Their favourite dish is mushroom risotto", "recalled": []}
    out = graph.invoke(payload) if mode == "sync" else await graph.ainvoke(payload)
    assert out["recalled"] == ["Their favourite dish is mushroom risotto"]
    assert len(store.search(("memories", "u1"))) == 2
