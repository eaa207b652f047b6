"""The response cache's file (models/cache.py) and the endpoint limiter (models/limits.py) on their own: keys,
records, concurrent writers, `kill -9`, files it must refuse; AIMD under 429s. How a run uses them is in
tests/test_gateway.py."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

from amphoreus_graph.models.cache import (
    CacheError,
    ResponseCache,
    model_identity,
    reply_message,
    reply_record,
    request_key,
)
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.models.limits import EndpointLimiter
from tests.conftest import REPO

MESSAGES = [SystemMessage("You are Aglaea."), HumanMessage("Cycle 1, round 1. Your options: ...")]


def _openai(**settings):
    pytest.importorskip("langchain_openai")
    from langchain_openai import ChatOpenAI

    base = {"model": "m", "base_url": "http://127.0.0.1:9/v1", "api_key": "k", "max_retries": 0, "timeout": 5}
    return ChatOpenAI(**{**base, **settings})


def test_the_key_is_what_shapes_the_answer_and_nothing_else():
    key = request_key(model_identity(_openai()), MESSAGES, {})
    assert key == request_key(model_identity(_openai()), list(MESSAGES), {}), "stable"
    same = [
        _openai(timeout=99),
        _openai(max_retries=5),
        _openai(base_url="http://127.0.0.1:9/v1/"),
        _openai(api_key="another"),
        _openai(default_headers={"X-Amphoreus-Graph-Role": "judge"}),
    ]
    for model in same:
        assert request_key(model_identity(model), MESSAGES, {}) == key, "timeouts, retries, keys, headers: no"
    different = [
        request_key(model_identity(_openai(temperature=0.7)), MESSAGES, {}),
        request_key(model_identity(_openai(model="other")), MESSAGES, {}),
        request_key(model_identity(_openai(base_url="http://127.0.0.1:10/v1")), MESSAGES, {}),
        request_key(model_identity(_openai(seed=3)), MESSAGES, {}),
        request_key(model_identity(_openai()), [*MESSAGES[:1], HumanMessage("Cycle 1, round 2.")], {}),
        request_key(model_identity(_openai()), MESSAGES, {"response_format": {"type": "json_schema"}}),
        request_key(model_identity(ScriptedChatModel()), MESSAGES, {}),
        request_key(model_identity(ScriptedChatModel(seed=1)), MESSAGES, {}),
    ]
    assert len({key, *different}) == len(different) + 1


def test_a_scripted_stand_in_is_keyed_by_its_settings_not_its_latency():
    assert model_identity(ScriptedChatModel(latency_s=0.5)) == model_identity(ScriptedChatModel())
    assert model_identity(ScriptedChatModel(malformed_rate=0.2)) != model_identity(ScriptedChatModel())


def test_a_reply_comes_back_as_it_was_given(tmp_path):
    reply = AIMessage(
        content='{"action": "rest"}',
        tool_calls=[{"name": "decide", "args": {"action": "rest"}, "id": "call_1", "type": "tool_call"}],
        usage_metadata={"input_tokens": 12, "output_tokens": 3, "total_tokens": 15},
        response_metadata={"finish_reason": "stop", "model_name": "m", "id": "chatcmpl-9"},
    )
    with ResponseCache(tmp_path / "cache.sqlite") as cache:
        cache.put("k", reply_record(reply), model="m", role="decide")
        cache.put("k", reply_record(AIMessage("another answer")), model="m", role="decide")
        again = reply_message(cache.get("k") or {})
        assert cache.get("missing") is None and len(cache) == 1
    assert again.content == reply.content and again.tool_calls == reply.tool_calls, "the first answer stays"
    assert again.usage_metadata == reply.usage_metadata
    assert again.response_metadata == {"finish_reason": "stop", "model_name": "m", "cached": True}


def test_a_file_that_is_not_a_cache_is_one_line(tmp_path):
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database, it is a shopping list" * 100)
    with pytest.raises(CacheError) as refused:
        ResponseCache(junk).open()
    assert str(junk) in str(refused.value) and "\n" not in str(refused.value)
    other = tmp_path / "other.sqlite"
    with ResponseCache(other):
        pass
    with sqlite3.connect(other) as conn:
        conn.execute("UPDATE meta SET value = '99' WHERE name = 'format'")
    with pytest.raises(CacheError, match="format 99"):
        ResponseCache(other).open()
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    with pytest.raises(CacheError, match="cannot create"):
        ResponseCache(blocked / "cache.sqlite").open()


WRITER = """
import sys, time
from amphoreus_graph.models.cache import ResponseCache
path, name, count = sys.argv[1], sys.argv[2], int(sys.argv[3])
cache = ResponseCache(path).open()
print("ready", flush=True)
for i in range(count):
    record = {"content": f"{name}-{i}" + "x" * 2000, "tool_calls": [], "usage": {"input_tokens": i, "output_tokens": 1}}
    cache.put(f"{name}-{i}", record, model="m", role="decide")
    cache.put(f"shared-{i}", {**record, "content": f"shared-{i}"}, model="m", role="decide")
print("done", cache.errors, flush=True)
"""


def _writer(path, name: str, count: int) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path), name, str(count)], env=env, stdout=subprocess.PIPE, text=True
    )


@pytest.mark.slow
def test_several_processes_write_one_cache_at_once(tmp_path):
    path = tmp_path / "cache.sqlite"
    writers = [_writer(path, f"w{n}", 300) for n in range(4)]
    outputs = [w.communicate(timeout=120)[0] for w in writers]
    assert all(w.returncode == 0 for w in writers) and all("done 0" in out for out in outputs), outputs
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("SELECT COUNT(*) FROM replies").fetchone()[0] == 4 * 300 + 300
    with ResponseCache(path) as cache:
        assert (cache.get("shared-7") or {})["content"] == "shared-7"


@pytest.mark.slow
def test_kill_9_mid_write_leaves_a_whole_cache(tmp_path):
    path = tmp_path / "cache.sqlite"
    for attempt in range(3):  # killed at three different moments
        writer = _writer(path, f"k{attempt}", 100_000)
        assert writer.stdout is not None and writer.stdout.readline().strip() == "ready"
        time.sleep(0.3 + 0.2 * attempt)
        writer.send_signal(signal.SIGKILL)
        writer.wait(timeout=10)
        assert writer.returncode == -signal.SIGKILL
        with sqlite3.connect(path) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        with ResponseCache(path) as cache:
            kept = len(cache)
            assert kept > 0 and (cache.get(f"k{attempt}-0") or {})["content"].startswith(f"k{attempt}-0")
            cache.put("after", {"content": "fine", "tool_calls": [], "usage": {}}, model="m", role="decide")
            assert cache.errors == 0 and len(cache) == kept + 1
        with sqlite3.connect(path) as conn:
            conn.execute("DELETE FROM replies WHERE key = 'after'")


# --- the endpoint limiter ------------------------------------------------------------------------------------


async def _hold(limiter: EndpointLimiter, seconds: float, **outcome: bool) -> None:
    ticket = await limiter.acquire()
    try:
        await asyncio.sleep(seconds)
    finally:
        limiter.release(ticket, **outcome)


async def test_the_limiter_never_lets_more_through_than_its_limit():
    limiter = EndpointLimiter("http://e", 4)
    await asyncio.gather(*(_hold(limiter, 0.005, answered=True) for _ in range(40)))
    stats = limiter.stats()
    assert stats.peak_in_flight == 4 and stats.in_flight == 0 and stats.waits == 36


async def test_a_burst_of_429s_halves_once_and_calm_grows_it_back_to_the_ceiling():
    limiter = EndpointLimiter("http://e", 8)
    tickets = [await limiter.acquire() for _ in range(8)]
    halved = [limiter.release(t, rate_limited=True) for t in tickets]
    assert halved.count(True) == 1 and limiter.limit == 4, "one episode, one halving"
    ticket = await limiter.acquire()
    assert limiter.release(ticket, rate_limited=True) and limiter.limit == 2, "a 429 sent after it halves again"
    for _ in range(200):
        limiter.release(await limiter.acquire(), answered=True)
    stats = limiter.stats()
    assert stats.limit == 8 and stats.halvings == 2 and stats.regrowths == 6, "additive: one at a time, to 8"
    assert [limit for _, limit in stats.history] == [8, 4, 2, 3, 4, 5, 6, 7, 8]


async def test_a_cancelled_wait_gives_no_slot_away():
    limiter = EndpointLimiter("http://e", 1)
    ticket = await limiter.acquire()
    waiting = asyncio.create_task(limiter.acquire())
    await asyncio.sleep(0.01)
    waiting.cancel()
    limiter.release(ticket, answered=True)
    with pytest.raises(asyncio.CancelledError):
        await waiting
    await asyncio.wait_for(_hold(limiter, 0), 1)
    assert limiter.in_flight == 0


def test_callers_on_other_threads_and_loops_share_the_limit():
    limiter = EndpointLimiter("http://e", 3)
    peak = []

    def worker() -> None:
        async def many() -> None:
            await asyncio.gather(*(_hold(limiter, 0.002, answered=True) for _ in range(30)))

        asyncio.run(many())

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for thread in threads:
        thread.start()
    while any(t.is_alive() for t in threads):
        peak.append(limiter.in_flight)
        time.sleep(0.001)
    for thread in threads:
        thread.join()
    assert limiter.stats().peak_in_flight == 3 and limiter.in_flight == 0 and max(peak) <= 3
