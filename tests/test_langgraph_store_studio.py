"""ChromaStore behind `langgraph dev`'s store API (what Studio and langgraph-sdk's `client.store` call): a real
server over langgraph.json, its `"store"` the factory in graphs/store.py."""

from __future__ import annotations

import langgraph_sdk
import pytest

from tests.test_studio import Server, server  # noqa: F401 - the module's server fixture

pytestmark = pytest.mark.slow


async def test_the_store_api_runs_on_chroma_store(server: Server) -> None:  # noqa: F811
    store = langgraph_sdk.get_client(url=server.url).store
    await store.put_item(["notes", "u1"], "dish", {"text": "Their favourite dish is mushroom risotto"})
    await store.put_item(["notes", "u1"], "home", {"text": "They live in a flat by the sea"})
    await store.put_item(["notes", "u2"], "brief", {"text": "Gone in a minute"}, ttl=1)
    assert (await store.get_item(["notes", "u1"], "dish"))["value"]["text"].endswith("risotto")
    found = (await store.search_items(["notes", "u1"], query="what food do they like?", limit=1))["items"]
    assert [item["key"] for item in found] == ["dish"] and found[0]["score"] is not None
    listed = (await store.list_namespaces(prefix=["notes"]))["namespaces"]
    assert [tuple(ns) for ns in listed] == [("notes", "u1"), ("notes", "u2")]
    await store.delete_item(["notes", "u1"], "home")
    assert [i["key"] for i in (await store.search_items(["notes"], limit=10))["items"]] == ["brief", "dish"]
    assert (server.memory_dir.parent / "store" / "amphoreus.lock").exists()
