"""A real OpenAI-compatible HTTP server on 127.0.0.1 for the model tests, driven through the real client.

Why: LangChain's fake chat models cannot do structured output, and our own `ScriptedChatModel` never leaves the
process, so neither shows what a real provider does to a caller: HTTP errors, `Retry-After`, timeouts, dropped
connections, bodies that do not parse, native structured output that may be switched off. This server does, over
a real socket, to the real `langchain-openai` client, and it keeps a log of every request it received, so a test
can compare what the model gateway says it did with what actually reached the "provider".

Standard library only (`http.server`), one background thread per connection, a free loopback port; it never
touches the network beyond 127.0.0.1. Start it with `OpenAIServer()` as a context manager or the `openai_server`
fixture (tests/conftest.py); `server.chat()` builds a `ChatOpenAI` aimed at it with the client's own retries off.

Endpoints: `POST /v1/chat/completions` (JSON or, with `stream: true`, server-sent events) and `GET /v1/models`
(lists the one model: a reachability probe); anything else is a 404 with an OpenAI-style error body.

**Replies.** `server.replier` is a function of the request (`ChatRequest`) returning the reply text (or a
`ToolCall`). The default, `default_reply`, answers the project's prompts sensibly and deterministically, as
`ScriptedChatModel` does (`scripted_answer`, with the same key, so both pick alike): an agent turn's options
(`- action [targets]: help`) get a valid Decision, a judge's `Dimensions: ...` get integer scores, an importance
prompt an integer, a reflection an insight citing memories, a game master's round a resolution, `Choose one of:
...` a choice; anything else gets a short plain reply. With `response_format: json_schema` the reply is built
to validate against the schema (`fill_schema`: the Decision schema and simple flat schemas, `$ref`/`anyOf`
included), filled from that prompt-derived answer where its keys fit; with `tools` and a `tool_choice` naming a
function (or `"required"`) the reply is a `tool_calls` message whose arguments are built the same way from the
function's parameters. So `ChatOpenAI(...).with_structured_output(Schema, method="json_schema")` and
`method="function_calling"` both work. `json_schema=False` / `tools=False` switch a capability off: a request
using it then gets HTTP 400 with OpenAI's own wording, so code that detects support can be tested.

**Usage** (`usage` in every answer, hence `AIMessage.usage_metadata`): tokens are whitespace-separated words:
`prompt_tokens` = words in all the messages' text, `completion_tokens` = words in the reply's content (or a tool
call's arguments). Crude, but deterministic and easy to predict in a test.

**Behaviours**, chosen per chat request by `server.schedule` (a function of the request returning a
`Behaviour`): answer; `FAIL` (500); `RATE_LIMIT` (429 with `Retry-After: retry_after_s`); `TIMEOUT` (sleeps
`hang_s`, longer than the client's timeout, then closes without answering); `DROP` (closes the connection without
a response); `GARBAGE` (a valid completion whose content is not JSON); `MALFORMED` (HTTP 200 whose body is not
JSON at all); `SLOW` (answers after `slow_s`); `UNSUPPORTED` (400). `latency_s` delays every chat request (for
benchmarks). Schedules: `Queue([...], then=ANSWER)` (one behaviour per request, in order), `RandomMix({FAIL:
0.3, GARBAGE: 0.2}, seed=1)` (a seeded draw per request: the totals over N requests are fixed by the seed,
whichever request gets which), `always(b)`, or any function of the request, e.g. `lambda r: FAIL if r.role ==
"judge" else ANSWER`. A sleep ends early when the server stops, so stopping is fast.

**Request log** (`server.log`): one `LoggedRequest` per request received, appended before the response is sent
(time, method, path, status or None when nothing was sent, behaviour, model, headers, role, response_format type,
tools used, tokens returned, the client's `x-stainless-retry-count`), thread-safe, with `by_status()`,
`by_behaviour()`, `by_role()` counters (chat requests only unless asked).

**The role header.** The gateway tags each request with its caller's role in `X-Amphoreus-Graph-Role` (`ROLE_HEADER`);
the log reads it (`LoggedRequest.role`). With `ChatOpenAI` (langchain-openai 1.7) a per-call header is attached:
- per call: `invoke(messages, extra_headers={ROLE_HEADER: "judge"})`, likewise `ainvoke`, `batch`, `abatch`,
  and on a structured model too: `chat.with_structured_output(S).invoke(m, extra_headers=h)` (with json_schema or
  function calling): the keyword travels down to the chat model, whose extra keyword arguments become request
  parameters, and the OpenAI client sends `extra_headers` as HTTP headers;
- per model instance: `ChatOpenAI(..., default_headers={...})`, on every request that instance sends;
- NOT `chat.bind(extra_headers=h).with_structured_output(S)`: the binding hands `with_structured_output` to the
  bare model and the header is lost (a plain `chat.bind(extra_headers=h).invoke(m)` does send it).
tests/test_openai_server.py proves each arrives.

Also seen from the log: with `max_retries=0` the client's `x-stainless-retry-count` is always "0", i.e. it did
not retry on its own (with its default of 2 it does, silently, and the log shows "1", "2").
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import random
import socket
import threading
import time
from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any

from amphoreus_graph.models.fake import scripted_answer
from amphoreus_graph.models.gateway import ROLE_HEADER  # the gateway tags each request with its role

if TYPE_CHECKING:
    from langchain_openai import ChatOpenAI

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"
GARBAGE_TEXT = "Well, I would rather not answer in JSON today."
MALFORMED_BODY = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"index": 0, "mess'
PLAIN_REPLY = "Understood."
# OpenAI's own wording (langchain-openai recognises the first and warns that json_schema is unsupported).
NO_JSON_SCHEMA = "'response_format' of type 'json_schema' is not supported with this model."
NO_TOOLS = "'tools' is not supported with this model."


class Behaviour(StrEnum):
    """What the server does with one chat request (the first nine can be scheduled)."""

    ANSWER = "answer"
    FAIL = "fail"  # HTTP 500
    RATE_LIMIT = "rate_limit"  # HTTP 429 with Retry-After
    TIMEOUT = "timeout"  # sleep past the client's timeout, then close without a response
    DROP = "drop"  # close the connection without a response
    GARBAGE = "garbage"  # a valid completion whose content is not JSON
    MALFORMED = "malformed"  # HTTP 200 whose body is not JSON
    SLOW = "slow"  # answer after slow_s
    UNSUPPORTED = "unsupported"  # HTTP 400 (also what a switched-off capability gets)
    BAD_REQUEST = "bad_request"  # the request itself did not parse: HTTP 400
    SCRIPT_ERROR = "script_error"  # the test's own replier or schedule raised: HTTP 500 with its message
    MODELS = "models"  # GET /v1/models
    NOT_FOUND = "not_found"  # any other path: HTTP 404


@dataclass(frozen=True)
class ToolCall:
    """A reply that calls a tool (a replier may return one; the server builds one for a forced tool)."""

    name: str
    arguments: str


@dataclass(frozen=True)
class ChatRequest:
    """One chat-completions request as the replier and the schedule see it."""

    body: dict[str, Any]
    headers: dict[str, str]  # names lower-cased

    @property
    def model(self) -> str:
        return str(self.body.get("model", ""))

    @property
    def role(self) -> str | None:
        return self.headers.get(ROLE_HEADER.lower())

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages") or [])

    @property
    def prompt(self) -> str:
        """All messages' text, one per line: what the reply is derived from (as `ScriptedChatModel` does)."""
        return "\n".join(message_text(m) for m in self.messages)

    @property
    def last_user(self) -> str:
        return next((message_text(m) for m in reversed(self.messages) if m.get("role") == "user"), "")

    @property
    def key(self) -> str:
        return hashlib.sha256(self.prompt.encode()).hexdigest()

    @property
    def response_format(self) -> str | None:
        """The requested response format's type (`json_schema`, `json_object`, `text`), if any."""
        fmt = self.body.get("response_format")
        return str(fmt.get("type")) if isinstance(fmt, dict) else None

    @property
    def tools(self) -> list[dict[str, Any]]:
        return [t for t in self.body.get("tools") or [] if isinstance(t, dict) and t.get("type") == "function"]

    @property
    def forced_tool(self) -> dict[str, Any] | None:
        """The function the request makes the model call (`tool_choice` naming one, or `"required"`), if any."""
        choice = self.body.get("tool_choice")
        functions = [t["function"] for t in self.tools]
        if isinstance(choice, dict):
            name = (choice.get("function") or {}).get("name")
            return next((f for f in functions if f.get("name") == name), None)
        return functions[0] if choice == "required" and functions else None

    @property
    def schema(self) -> dict[str, Any] | None:
        """The JSON schema the reply must satisfy: the forced tool's parameters, or the json_schema format's."""
        if (tool := self.forced_tool) is not None:
            return dict(tool.get("parameters") or {"type": "object", "properties": {}})
        fmt = self.body.get("response_format")
        if isinstance(fmt, dict) and fmt.get("type") == "json_schema":
            return dict((fmt.get("json_schema") or {}).get("schema") or {})
        return None


Replier = Callable[[ChatRequest], "str | ToolCall"]
Schedule = Callable[[ChatRequest], Behaviour]


def message_text(message: Mapping[str, Any]) -> str:
    """A message's text, whether its content is a string or a list of parts."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def count_tokens(text: str) -> int:
    """This server's token count: whitespace-separated words (deterministic, easy to predict)."""
    return len(text.split())


# --- replies ---------------------------------------------------------------------------------------------------


def prompt_answer(prompt: str, key: str) -> Any:
    """What the project's prompts ask for, as `ScriptedChatModel` answers them; a plain reply to anything else."""
    answer = scripted_answer(prompt, key)
    return PLAIN_REPLY if answer is None else answer


def default_reply(request: ChatRequest) -> str:
    """The reply text: JSON fitting the requested schema if there is one, else the prompt's answer as text."""
    answer = prompt_answer(request.prompt, request.key)
    if (schema := request.schema) is not None:
        return json.dumps(fill_schema(schema, answer, schema.get("$defs", {})))
    if request.response_format == "json_object":
        return json.dumps(answer if isinstance(answer, dict) else {"answer": answer})
    return answer if isinstance(answer, str) else json.dumps(answer)


class InFlight:
    """A replier that takes `latency_s` and records, at every start and end, how many requests it is answering (and
    by which role): what a benchmark or a test of concurrency reads."""

    def __init__(self, latency_s: float) -> None:
        self.latency_s = latency_s
        self.now = 0
        self.changes: list[tuple[float, int]] = []  # (time, in flight after the change)
        self.roles: Counter[str] = Counter()  # requests by the gateway's role header
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> str:
        with self._lock:
            self.roles[request.role or "?"] += 1
            self.now += 1
            self.changes.append((time.monotonic(), self.now))
        time.sleep(self.latency_s)
        with self._lock:
            self.now -= 1
            self.changes.append((time.monotonic(), self.now))
        return default_reply(request)

    @property
    def peak(self) -> int:
        return max((n for _, n in self.changes), default=0)


def mean_in_flight(changes: list[tuple[float, int]], start: float, end: float) -> float:
    """Time-weighted mean of requests in flight over [start, end], from an InFlight's `changes`."""
    total, level, last = 0.0, 0, start
    for at, after in changes:
        if at > end:
            break
        if at > start:
            total += level * (at - last)
            last = at
        level = after
    total += level * (end - last)
    return total / (end - start)


def fill_schema(schema: Mapping[str, Any], hint: Any, defs: Mapping[str, Any]) -> Any:
    """A value valid against `schema`, taken from `hint` where it fits (so a Decision schema gets the Decision
    the prompt asks for) and made up where it does not. Covers objects, arrays, scalars, enums, consts, `$ref`
    into `$defs` and `anyOf`/`oneOf`: what pydantic and flat schemas produce, not the whole of JSON Schema."""
    if ref := schema.get("$ref"):
        return fill_schema(defs[str(ref).rsplit("/", 1)[-1]], hint, defs)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return hint if hint in schema["enum"] else schema["enum"][0]
    if options := schema.get("anyOf") or schema.get("oneOf"):
        return fill_schema(_pick_option(options, hint, defs), hint, defs)
    kind = schema.get("type")
    if isinstance(kind, list):
        kind = "null" if hint is None and "null" in kind else next((k for k in kind if k != "null"), "null")
    return _fill_typed(str(kind) if kind else _kind_of(hint), schema, hint, defs)


def _pick_option(options: list[Mapping[str, Any]], hint: Any, defs: Mapping[str, Any]) -> Mapping[str, Any]:
    """The `anyOf` branch the hint fits (null for a None hint where allowed), else the first non-null one."""
    resolved = [defs[str(o["$ref"]).rsplit("/", 1)[-1]] if "$ref" in o else o for o in options]
    fitting = [o for o in resolved if o.get("type") == _kind_of(hint)]
    non_null = [o for o in resolved if o.get("type") != "null"]
    return (fitting or non_null or resolved)[0]


def _kind_of(value: Any) -> str:
    """A Python value's JSON Schema type name."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    kinds = {int: "integer", float: "number", str: "string", dict: "object", list: "array"}
    return next((name for cls, name in kinds.items() if isinstance(value, cls)), "string")


def _fill_typed(kind: str, schema: Mapping[str, Any], hint: Any, defs: Mapping[str, Any]) -> Any:
    if kind == "object":
        properties: Mapping[str, Any] = schema.get("properties") or {}
        given = hint if isinstance(hint, dict) else {}
        if not properties:  # a free-form map (e.g. scores: dict[str, int]): the hint's, if it has one
            return given
        return {name: fill_schema(sub, given.get(name), defs) for name, sub in properties.items()}
    if kind == "array":
        items = schema.get("items") or {}
        given_items = hint if isinstance(hint, list) and hint else [None] * max(1, int(schema.get("minItems", 1)))
        return [fill_schema(items, item, defs) for item in given_items]
    if kind in ("integer", "number"):
        low, high = schema.get("minimum", 1), schema.get("maximum", 10)
        number = hint if _kind_of(hint) in ("integer", "number") else 5
        number = min(max(number, low), high)
        return int(number) if kind == "integer" else float(number)
    if kind == "boolean":
        return hint if isinstance(hint, bool) else True
    if kind == "null":
        return None
    return hint if isinstance(hint, str) else "text"


# --- schedules -------------------------------------------------------------------------------------------------


def always(behaviour: Behaviour) -> Schedule:
    """Every chat request gets `behaviour`."""
    return lambda _request: behaviour


class Queue:
    """One behaviour per chat request, in order; `then` once the queue is empty (thread-safe)."""

    def __init__(self, behaviours: Iterable[Behaviour], *, then: Behaviour = Behaviour.ANSWER) -> None:
        self._queue = deque(behaviours)
        self._then = then
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Behaviour:
        with self._lock:
            return self._queue.popleft() if self._queue else self._then

    def __len__(self) -> int:
        return len(self._queue)


class RandomMix:
    """A seeded draw per chat request: each behaviour at its rate, `ANSWER` for the rest. The draws come from one
    seeded sequence, so N requests get the same totals every run (which request gets which may vary when they
    race)."""

    def __init__(self, rates: Mapping[Behaviour, float], *, seed: int = 0) -> None:
        if sum(rates.values()) > 1.0 + 1e-9:
            raise ValueError(f"rates add up to more than 1: {dict(rates)}")
        self._cumulative = list(zip(itertools.accumulate(rates.values()), rates.keys(), strict=True))
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, request: ChatRequest) -> Behaviour:
        with self._lock:
            draw = self._rng.random()
        return next((b for bound, b in self._cumulative if draw < bound), Behaviour.ANSWER)


# --- the request log -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the server received and answered it (`status` None: no response was sent)."""

    at: float
    method: str
    path: str
    status: int | None
    behaviour: Behaviour
    model: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    role: str | None = None
    response_format: str | None = None
    tools: bool = False
    prompt_tokens: int = 0
    completion_tokens: int = 0
    body: Mapping[str, Any] = field(default_factory=dict)  # the request's JSON, as parsed

    @property
    def client_retry(self) -> int | None:
        """The OpenAI client's own retry number for this request (`x-stainless-retry-count`), if it sent one."""
        value = self.headers.get("x-stainless-retry-count")
        return int(value) if value is not None and value.isdigit() else None


class RequestLog:
    """Every request the server received, in arrival order; thread-safe."""

    def __init__(self) -> None:
        self._entries: list[LoggedRequest] = []
        self._lock = threading.Lock()

    def append(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self, path: str | None = CHAT_PATH) -> list[LoggedRequest]:
        """A snapshot: the chat requests by default, every request with `path=None`."""
        with self._lock:
            return [e for e in self._entries if path is None or e.path == path]

    def __len__(self) -> int:
        return len(self.entries())

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def by_status(self, path: str | None = CHAT_PATH) -> Counter[int | None]:
        return Counter(e.status for e in self.entries(path))

    def by_behaviour(self, path: str | None = CHAT_PATH) -> Counter[Behaviour]:
        return Counter(e.behaviour for e in self.entries(path))

    def by_role(self, path: str | None = CHAT_PATH) -> Counter[str | None]:
        return Counter(e.role for e in self.entries(path))


# --- the server ------------------------------------------------------------------------------------------------


@dataclass
class _Response:
    """What the handler sends: a status, headers and body; `None` status: close without a response."""

    status: int | None
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    tokens: tuple[int, int] = (0, 0)  # prompt, completion: for the log


class OpenAIServer:
    """The server: settings are plain attributes, changeable between (or during) requests; see the module doc."""

    def __init__(
        self,
        *,
        model: str = "amphoreus-test",
        replier: Replier = default_reply,
        schedule: Schedule | None = None,
        json_schema: bool = True,
        tools: bool = True,
        latency_s: float = 0.0,
        slow_s: float = 0.5,
        hang_s: float = 5.0,
        retry_after_s: float = 1,
    ) -> None:
        self.model = model
        self.replier = replier
        self.schedule: Schedule = schedule or always(Behaviour.ANSWER)
        self.json_schema = json_schema
        self.tools = tools
        self.latency_s = latency_s
        self.slow_s = slow_s
        self.hang_s = hang_s
        self.retry_after_s = retry_after_s
        self.log = RequestLog()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # lifecycle

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the server is not running")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        """The base URL a client takes (`.../v1`)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> OpenAIServer:
        self._stopping.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler, self)
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="openai-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests asleep (timeouts, latency) wake and close at once."""
        self._stopping.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._httpd = self._thread = None

    def __enter__(self) -> OpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # conveniences for tests

    def queue(self, *behaviours: Behaviour, then: Behaviour = Behaviour.ANSWER) -> Queue:
        """Schedule these behaviours for the next chat requests, in order, then `then`."""
        queue = Queue(behaviours, then=then)
        self.schedule = queue
        return queue

    def chat(self, *, timeout: float = 5.0, **kwargs: Any) -> ChatOpenAI:
        """A real `ChatOpenAI` aimed at this server, the client's hidden retries off (needs langchain-openai)."""
        from langchain_openai import ChatOpenAI

        settings: dict[str, Any] = {"model": self.model, "base_url": self.url, "api_key": "unused", "max_retries": 0}
        return ChatOpenAI(**{**settings, "timeout": timeout, **kwargs})

    @property
    def stopping(self) -> bool:
        return self._stopping.is_set()

    def sleep(self, seconds: float) -> None:
        """Sleep, waking early when the server stops (so a hung request never holds up a test's teardown)."""
        if seconds > 0:
            self._stopping.wait(seconds)

    # handling (called from the handler's thread)

    def handle(self, method: str, path: str, headers: dict[str, str], raw: bytes) -> _Response:
        """Decide the response to one request and log it before it is sent."""
        base = path.split("?", 1)[0].rstrip("/")
        if method == "GET" and base == MODELS_PATH:
            listing = {
                "object": "list",
                "data": [{"id": self.model, "object": "model", "created": 0, "owned_by": "test"}],
            }
            return self._logged(method, base, headers, Behaviour.MODELS, _json(200, listing))
        if method != "POST" or base != CHAT_PATH:
            return self._logged(method, base, headers, Behaviour.NOT_FOUND, _error(404, f"no route {method} {base}"))
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            return self._logged(method, base, headers, Behaviour.BAD_REQUEST, _error(400, f"invalid JSON: {exc}"))
        request = ChatRequest(body=body, headers=headers)
        try:
            refusal = self._unsupported(request)
            behaviour = Behaviour.UNSUPPORTED if refusal is not None else self.schedule(request)
            response = refusal or self._respond(request, behaviour)
        except Exception as exc:  # a test's script is wrong: say so to the client rather than kill the thread
            behaviour = Behaviour.SCRIPT_ERROR
            response = _error(500, f"the test server's script raised {type(exc).__name__}: {exc}", kind="server_error")
        response.delay_s += self.latency_s
        return self._logged(method, base, headers, behaviour, response, request)

    def _unsupported(self, request: ChatRequest) -> _Response | None:
        """A 400 for a capability that is switched off, as a provider without it answers."""
        if not self.json_schema and request.response_format == "json_schema":
            return _error(400, NO_JSON_SCHEMA, param="response_format")
        if not self.tools and "tools" in request.body:
            return _error(400, NO_TOOLS, param="tools")
        return None

    def _respond(self, request: ChatRequest, behaviour: Behaviour) -> _Response:
        match behaviour:
            case Behaviour.ANSWER | Behaviour.SLOW | Behaviour.GARBAGE:
                reply = GARBAGE_TEXT if behaviour is Behaviour.GARBAGE else self.replier(request)
                if isinstance(reply, str) and (tool := request.forced_tool) is not None:
                    reply = ToolCall(str(tool.get("name")), reply)
                response = self._completion(request, reply)
                response.delay_s = self.slow_s if behaviour is Behaviour.SLOW else 0.0
                return response
            case Behaviour.FAIL:
                return _error(500, "The server had an error while processing your request.", kind="server_error")
            case Behaviour.RATE_LIMIT:
                response = _error(429, "Rate limit reached; please retry later.", kind="rate_limit_exceeded")
                response.headers["Retry-After"] = f"{self.retry_after_s:g}"
                return response
            case Behaviour.TIMEOUT:
                return _Response(status=None, delay_s=self.hang_s)
            case Behaviour.DROP:
                return _Response(status=None)
            case Behaviour.MALFORMED:
                return _Response(status=200, body=MALFORMED_BODY)
            case _:
                return _error(400, "This request is not supported here.", param=None)

    def _completion(self, request: ChatRequest, reply: str | ToolCall) -> _Response:
        """A chat completion (or its event stream) carrying `reply`, with usage."""
        number = next(self._ids)
        if isinstance(reply, ToolCall):
            call = {
                "id": f"call_{number}",
                "type": "function",
                "function": {"name": reply.name, "arguments": reply.arguments},
            }
            message: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": [call]}
            finish, text = "tool_calls", reply.arguments
        else:
            message, finish, text = {"role": "assistant", "content": reply}, "stop", reply
        message["refusal"] = None
        prompt_tokens, completion_tokens = count_tokens(request.prompt), count_tokens(text)
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
        usage["total_tokens"] = prompt_tokens + completion_tokens
        head = {"id": f"chatcmpl-{number}", "created": int(time.time()), "model": request.model or self.model}
        if request.body.get("stream"):
            with_usage = bool((request.body.get("stream_options") or {}).get("include_usage"))
            response = _event_stream(head, message, finish, usage if with_usage else None)
        else:
            choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
            response = _json(200, {**head, "object": "chat.completion", "choices": [choice], "usage": usage})
        response.tokens = (prompt_tokens, completion_tokens)
        return response

    def _logged(
        self,
        method: str,
        path: str,
        headers: dict[str, str],
        behaviour: Behaviour,
        response: _Response,
        request: ChatRequest | None = None,
    ) -> _Response:
        self.log.append(
            LoggedRequest(
                at=time.time(),
                method=method,
                path=path,
                status=response.status,
                behaviour=behaviour,
                model=request.model if request else "",
                headers=headers,
                role=headers.get(ROLE_HEADER.lower()),
                response_format=request.response_format if request else None,
                tools=bool(request and "tools" in request.body),
                prompt_tokens=response.tokens[0],
                completion_tokens=response.tokens[1],
                body=request.body if request else {},
            )
        )
        return response


def _json(status: int, payload: Any) -> _Response:
    return _Response(status=status, body=json.dumps(payload).encode())


def _error(status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None) -> _Response:
    """An OpenAI-style error body (the client reads `error.message` into its exception)."""
    return _json(status, {"error": {"message": message, "type": kind, "param": param, "code": None}})


def _event_stream(
    head: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, int] | None
) -> _Response:
    """The same completion as server-sent events: the message in one delta, the finish, the usage if asked."""
    delta = {key: value for key, value in message.items() if value is not None}
    if "tool_calls" in delta:
        delta["tool_calls"] = [{"index": 0, **call} for call in delta["tool_calls"]]
    chunk = {**head, "object": "chat.completion.chunk"}
    events = [
        {**chunk, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
        {**chunk, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
    ]
    if usage is not None:
        events.append({**chunk, "choices": [], "usage": usage})
    body = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
    return _Response(status=200, body=body.encode(), content_type="text/event-stream")


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024  # socketserver's 5 drops a burst's connects: the client's SYN retry adds a second

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], app: OpenAIServer) -> None:
        self.app = app
        super().__init__(address, handler)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as the client's connection pool expects
    disable_nagle_algorithm = True  # headers and body go in two writes: with Nagle, each waits ~40 ms for an ACK
    timeout = 10  # an idle kept-alive connection is closed after this long
    server: _HTTPServer

    def do_GET(self) -> None:
        self._serve("GET")

    def do_POST(self) -> None:
        self._serve("POST")

    def _serve(self, method: str) -> None:
        app = self.server.app
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        headers = {name.lower(): value for name, value in self.headers.items()}
        response = app.handle(method, self.path, headers, raw)
        app.sleep(response.delay_s)
        if response.status is None or app.stopping:
            self._drop()
            return
        try:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(response.body)
        except OSError:  # the client gave up first (its timeout): nothing to do
            self.close_connection = True

    def _drop(self) -> None:
        """Close the connection with no response at all (the client sees the server disconnect)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""
