"""The response cache: what a model answered to a request, kept on disk, so the same request is answered again
without being sent (a repeated run, a resumed one, the societies of a Scepter run sharing one file).

**The key** is the SHA-256 of a canonical JSON (sorted keys, no spaces) of everything that shapes the answer:
- the model's identity: its class and `_llm_type`, its model name, its endpoint (base URL, trailing `/` dropped);
- its parameters: LangChain's `_identifying_params` (temperature, top_p, seed, max_tokens, stop, …) less what
  cannot change an answer (streaming, timeouts, retries, headers);
- the messages: each one's type, content (text or parts), name, an assistant's tool calls (name and arguments;
  not their ids, which a server makes up) and a tool message's call id;
- the request's options: the response format (a JSON schema, with the turn's offered actions in it) and tools.
Never the role header, the API key or anything else that only routes or authenticates a request.

**What is stored** is every reply the model gave to a request that succeeded: its content, tool calls, token
usage, finish reason and model name. A reply that then fails parsing is stored too: it is what the model said,
and a replay that gets it back makes the same repair request (itself cached), so a replayed run decides exactly as
the first did, repairs and fallbacks included. Failures are never stored (an HTTP error, a timeout, a dropped
connection, a body that is not a completion): they say nothing about the model, and a replay asks again. The
first answer stored for a key stays (`INSERT OR IGNORE`); within a process, identical requests in flight at once
are sent once (`flight`), so every answer a run used is the one on disk.

**Durability.** SQLite in WAL mode with a busy timeout: several writers (societies in one process, Ray workers in
several) share a file safely; every entry is its own transaction, so `kill -9` mid-write loses at most the
entry being written, never the file. `synchronous=NORMAL`: a power cut may lose the last entries, not corrupt.

Endpoints found not to offer a capability (native structured output) are remembered here too, so a replay does not
ask the endpoint again what it already refused.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from amphoreus_graph.errors import AmphoreusError

FORMAT = "1"  # bump when the key or the stored record changes: an old file is then refused, not misread
BUSY_TIMEOUT_S = 60.0
log = logging.getLogger(__name__)

# Parameters that cannot change what a model answers: left out of the key, so a run with another --timeout hits.
_NOT_SEMANTIC = frozenset(
    {
        "stream",
        "streaming",
        "request_timeout",
        "timeout",
        "max_retries",
        "default_headers",
        "default_query",
        "http_client",
        "http_async_client",
        "verbose",
        "latency_s",
        "stream_usage",
    }
)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    model TEXT NOT NULL,
    role TEXT NOT NULL,
    tokens_in INTEGER NOT NULL,
    tokens_out INTEGER NOT NULL,
    created REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS capabilities (
    endpoint TEXT NOT NULL,
    feature TEXT NOT NULL,
    supported INTEGER NOT NULL,
    PRIMARY KEY (endpoint, feature)
) WITHOUT ROWID;
"""


class CacheError(AmphoreusError):
    """A cache file that cannot be used (not SQLite, another format, not writable): one line."""


def endpoint_url(model: BaseChatModel) -> str | None:
    """Where a chat model sends its requests, if it says (OpenAI-compatible, Ollama, Anthropic clients)."""
    for name in ("openai_api_base", "base_url", "anthropic_api_url"):
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            return value.rstrip("/")
    return None


def model_name(model: BaseChatModel) -> str:
    for name in ("model_name", "model", "model_id"):
        value = getattr(model, name, None)
        if isinstance(value, str) and value:
            return value
    return ""


def model_identity(model: BaseChatModel) -> dict[str, Any]:
    """What identifies a chat model's answers: class, kind, name, endpoint and sampling parameters."""
    cls = type(model)
    try:
        params = dict(model._identifying_params)
    except Exception:  # a third-party model whose params cannot be read: its class and name still key it
        params = {}
    if not params:  # a model that names none (a test stand-in): the plain settings it declares itself
        own = set(type(model).model_fields) - set(BaseChatModel.model_fields)
        params = {
            name: value
            for name in sorted(own)
            if isinstance(value := getattr(model, name, None), str | int | float | bool)
        }
    return {
        "class": f"{cls.__module__}.{cls.__qualname__}",
        "llm_type": getattr(model, "_llm_type", ""),
        "name": model_name(model),
        "base_url": endpoint_url(model),
        "params": {key: value for key, value in params.items() if key not in _NOT_SEMANTIC and value is not None},
    }


def message_payload(message: BaseMessage) -> dict[str, Any]:
    """A message as the key sees it: what the model reads of it."""
    payload: dict[str, Any] = {"type": message.type, "content": message.content}
    if message.name:
        payload["name"] = message.name
    if isinstance(message, AIMessage) and message.tool_calls:
        payload["tool_calls"] = [{"name": call["name"], "args": call["args"]} for call in message.tool_calls]
    if isinstance(message, ToolMessage):
        payload["tool_call_id"] = message.tool_call_id
    return payload


def canonical(payload: Any) -> str:
    return json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def request_key(identity: Mapping[str, Any], messages: list[BaseMessage], options: Mapping[str, Any]) -> str:
    """The content address of one request (see the module's doc for what goes in)."""
    payload = {
        "format": FORMAT,
        "model": identity,
        "messages": [message_payload(m) for m in messages],
        "options": options,
    }
    return hashlib.sha256(canonical(payload).encode()).hexdigest()


def reply_record(reply: AIMessage) -> dict[str, Any]:
    """What is kept of a reply: enough to hand the caller the same message again."""
    usage: Mapping[str, Any] = reply.usage_metadata or {}
    meta = reply.response_metadata or {}
    return {
        "content": reply.content,
        "tool_calls": [{"name": c["name"], "args": c["args"], "id": c.get("id")} for c in reply.tool_calls],
        "usage": {
            "input_tokens": int(usage.get("input_tokens", 0)),
            "output_tokens": int(usage.get("output_tokens", 0)),
            "total_tokens": int(usage.get("total_tokens", 0)),
        },
        "finish_reason": meta.get("finish_reason"),
        "model_name": meta.get("model_name"),
    }


def reply_message(record: Mapping[str, Any]) -> AIMessage:
    """A stored reply as the AIMessage the model gave (its metadata says it came from the cache)."""
    calls = [
        {"name": call["name"], "args": call["args"], "id": call.get("id"), "type": "tool_call"}
        for call in record["tool_calls"]
    ]
    meta = {"finish_reason": record.get("finish_reason"), "model_name": record.get("model_name"), "cached": True}
    return AIMessage(
        content=record["content"],
        tool_calls=calls,
        usage_metadata=record["usage"],
        response_metadata=meta,
    )


class ResponseCache:
    """One cache file. Safe to share between threads (a connection per thread), processes (WAL, busy timeout)
    and event loops; opened on first use (`open()` opens it now, to fail early with one line)."""

    def __init__(self, path: Path, *, busy_timeout_s: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.users = 0  # chat callers that answer from it: a run opens the file only if some model asks
        self.errors = 0  # reads and writes that failed (the run went on without the cache for them)
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._ready = False
        self._flights: dict[str, concurrent.futures.Future[dict[str, Any] | None]] = {}
        self._unsupported: dict[str, set[str]] = {}

    # connections

    def open(self) -> ResponseCache:
        self._connection()
        return self

    def _connection(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._connect()
            self._local.conn = conn
        return conn

    def _connect(self) -> sqlite3.Connection:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = sqlite3.connect(
                self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")
                conn.execute("PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                with self._lock:
                    if not self._ready:
                        conn.executescript(_SCHEMA)
                        conn.execute("INSERT OR IGNORE INTO meta (name, value) VALUES ('format', ?)", (FORMAT,))
                        (found,) = conn.execute("SELECT value FROM meta WHERE name = 'format'").fetchone()
                        if found != FORMAT:
                            raise CacheError(
                                f"{self.path}: a response cache of format {found}; expected format {FORMAT} "
                                "(another version wrote it: use another --cache directory, or --no-cache)"
                            )
                        self._ready = True
                    self._connections.append(conn)
            except BaseException:
                conn.close()
                raise
        except sqlite3.Error as exc:
            raise CacheError(
                f"{self.path}: cannot use it as the response cache ({exc}); expected a SQLite file a run wrote "
                "(another --cache directory, or --no-cache)"
            ) from None
        except OSError as exc:
            raise CacheError(
                f"{self.path}: cannot create the response cache ({exc.strerror or exc}); expected a writable "
                "directory (another --cache directory, or --no-cache)"
            ) from None
        return conn

    def close(self) -> None:
        with self._lock:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
            self._local = threading.local()
            self._ready = False

    def __enter__(self) -> ResponseCache:
        return self.open()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # replies

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored reply for `key` (None: not there, or the file could not be read just now)."""
        try:
            row = self._connection().execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
        except sqlite3.Error as exc:
            self._failed("read", exc)
            return None
        return None if row is None else dict(json.loads(row[0]))

    def put(self, key: str, record: Mapping[str, Any], *, model: str, role: str) -> None:
        """Keep a reply (the first one kept for a key stays). A write that fails is counted, not raised: the run
        has its answer either way."""
        usage = record.get("usage") or {}
        row = (
            key,
            canonical(record),
            model,
            role,
            int(usage.get("input_tokens", 0)),
            int(usage.get("output_tokens", 0)),
            time.time(),
        )
        try:
            self._connection().execute(
                "INSERT OR IGNORE INTO replies (key, reply, model, role, tokens_in, tokens_out, created) "
                "VALUES (?, ?, ?, ?, ?, ?, ?)",
                row,
            )
        except sqlite3.Error as exc:
            self._failed("write", exc)

    def _failed(self, what: str, exc: sqlite3.Error) -> None:
        with self._lock:
            self.errors += 1
            first = self.errors == 1
        if first:
            log.warning("response cache %s: a %s failed (%s); the run goes on without it", self.path, what, exc)

    def __len__(self) -> int:
        return int(self._connection().execute("SELECT COUNT(*) FROM replies").fetchone()[0])

    # identical requests in flight at once are sent once

    def flight(self, key: str) -> tuple[concurrent.futures.Future[dict[str, Any] | None], bool]:
        """The flight for `key` and whether the caller leads it (sends the request) or follows (awaits it)."""
        with self._lock:
            if (running := self._flights.get(key)) is not None:
                return running, False
            future: concurrent.futures.Future[dict[str, Any] | None] = concurrent.futures.Future()
            self._flights[key] = future
            return future, True

    def land(self, key: str, future: concurrent.futures.Future[dict[str, Any] | None], record: Any) -> None:
        """End a flight with the reply (None: the leader failed, and each follower asks for itself)."""
        with self._lock:
            if self._flights.get(key) is future:
                del self._flights[key]
        if not future.done():
            future.set_result(record)

    # what endpoints do not offer

    def unsupported(self, endpoint: str) -> set[str]:
        """Capabilities this endpoint was found not to offer (read once per endpoint)."""
        with self._lock:
            known = self._unsupported.get(endpoint)
        if known is None:
            try:
                rows = (
                    self._connection()
                    .execute("SELECT feature FROM capabilities WHERE endpoint = ? AND supported = 0", (endpoint,))
                    .fetchall()
                )
            except sqlite3.Error as exc:
                self._failed("read", exc)
                rows = []
            known = {feature for (feature,) in rows}
            with self._lock:
                known = self._unsupported.setdefault(endpoint, known)
        return set(known)

    def mark_unsupported(self, endpoint: str, feature: str) -> None:
        with self._lock:
            self._unsupported.setdefault(endpoint, set()).add(feature)
        try:
            self._connection().execute(
                "INSERT OR REPLACE INTO capabilities (endpoint, feature, supported) VALUES (?, ?, 0)",
                (endpoint, feature),
            )
        except sqlite3.Error as exc:
            self._failed("write", exc)
