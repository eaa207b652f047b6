"""The model gateway: every model call of a run goes through here — agents' decisions, importance, reflection,
judges, proposers, a world's game master, interviews — so every attempt is counted by the role it served.

A `ChatCaller` is one role's handle on a chat model: a concurrency slot, a timeout, and our own retries (the
client library's hidden retries are turned off where the model is made, so what is counted is what was sent).
Failures are classified (connection, timeout, HTTP status, rate limit, garbage, other); a 429's `Retry-After` is
honoured before the next attempt. What each attempt cost is recorded on the `Meter` of the current context: the
graph node that made the call opens one (`metered()`), so concurrent agent turns count apart, and the node
hands the meter's `ModelUse` to the run's state, where it is checkpointed with the step.

Around each request, three more things (each in its own module):
- the response cache (`cache.py`): a request asked before is answered from disk, counted as a cache hit (not a
  call, no tokens spent; what it would have cost is counted beside); a new answer is stored;
- the run's call log (`call_log.py`): each request written as it goes out and as it comes back, so what a run sent
  survives a kill that loses the counts of steps not yet checkpointed (`counted_use` reconciles the two);
- the endpoint's limiter (`limits.py`): one per endpoint in the process, shared by every caller of it, AIMD on
  429s; a wait for its slot and a halving are counted;
- native structured output (`structured.py`): a reply format (a JSON schema) asked for where the client sends
  one, dropped for good on an endpoint that refuses it;
- the send itself (`direct.py`): an OpenAI-compatible model's request without LangChain's Runnable wrapping where
  nothing listens to it, `ainvoke` otherwise.

Every request is sent from one event loop, on the gateway's own thread (`_CLIENT_LOOP`), whichever loop or
thread asked: async HTTP clients (httpx's, which langchain-openai shares per process) stay bound to the loop
they first ran on, and a run's graph, memory's raters in worker threads and a benchmark each bring their own.
"""

from __future__ import annotations

import asyncio
import bisect
import concurrent.futures
import contextvars
import email.utils
import json
import os
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from contextvars import ContextVar
from enum import StrEnum
from typing import Any, TypeVar

import httpx
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from pydantic import BaseModel, Field
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.models.cache import (
    ResponseCache,
    endpoint_url,
    model_identity,
    model_name,
    reply_message,
    reply_record,
    request_key,
)
from amphoreus_graph.models.call_log import INTERRUPTED, CallLog
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY, EndpointLimiter, Ticket, endpoint_limiter
from amphoreus_graph.models.structured import (
    CAPABILITIES,
    ReplyFormat,
    provider_options,
    refused_as_bad,
    speaks_openai,
    structured_mode,
)
from amphoreus_graph.models.transport import Transport, send

ROLE_HEADER = "X-Amphoreus-Graph-Role"
T = TypeVar("T")


class Role(StrEnum):
    """What a model call is for: counts, budgets and the test server's log are kept per role."""

    DECIDE = "decide"
    IMPORTANCE = "importance"
    REFLECT = "reflect"
    JUDGE = "judge"
    PROPOSE = "propose"
    GAME_MASTER = "game_master"
    INTERVIEW = "interview"


class Failure(StrEnum):
    CONNECTION = "connection"
    TIMEOUT = "timeout"
    HTTP_STATUS = "http_status"
    RATE_LIMIT = "rate_limit"
    GARBAGE = "garbage"
    OTHER = "other"
    INTERRUPTED = INTERRUPTED  # sent, and the run was killed before the answer came back (from the call log)


class MalformedOutput(ValueError):
    """The model answered, but not with what was asked (the message says what was wrong, for the repair)."""


# Latency histogram: upper bounds in ms, about 25% apart from 1 ms to 10 minutes (mergeable and bounded in size).
LATENCY_BOUNDS_MS: tuple[float, ...] = tuple(round(1.25**i, 1) for i in range(60))


class RoleUse(BaseModel):
    """What one role's model calls cost and how they went. `calls` are requests sent to the model (retries
    included; answers from the response cache are not calls), so they equal what the server saw."""

    calls: int = 0
    failures: dict[str, int] = Field(default_factory=dict, description="by kind: connection, timeout, …")
    retries: int = 0
    repairs: int = Field(default=0, description="repair passes asked after a reply that could not be used")
    fallbacks: int = Field(default=0, description="times a stand-in decided after the model kept failing")
    tokens_in: int = 0
    tokens_out: int = 0
    cache_hits: int = Field(default=0, description="answers from the response cache: no request, no tokens spent")
    cached_tokens_in: int = Field(default=0, description="what the cache hits would have cost, tokens sent")
    cached_tokens_out: int = Field(default=0, description="what the cache hits would have cost, tokens received")
    waits: int = Field(default=0, description="requests that waited for a slot of their endpoint's limiter")
    wait_ms: int = Field(default=0, description="time those requests waited for their slots")
    halvings: int = Field(default=0, description="429s that halved their endpoint's concurrency")
    retry_wait_ms: int = Field(default=0, description="time waited before retries (Retry-After or backoff)")
    latency_ms: list[int] = Field(default_factory=list, description="answered calls per LATENCY_BOUNDS_MS bucket")

    def add(self, other: RoleUse) -> RoleUse:
        failures = dict(self.failures)
        for kind, count in other.failures.items():
            failures[kind] = failures.get(kind, 0) + count
        width = max(len(self.latency_ms), len(other.latency_ms))
        mine, theirs = self.latency_ms + [0] * (width - len(self.latency_ms)), other.latency_ms
        counts = {name: getattr(self, name) + getattr(other, name) for name in _COUNTS}
        return RoleUse(
            **counts,
            failures=failures,
            latency_ms=[a + (theirs[i] if i < len(theirs) else 0) for i, a in enumerate(mine)],
        )

    def at_least(self, other: RoleUse) -> RoleUse:
        """Field by field, the larger count of two that each may have missed calls the other saw."""
        kinds = sorted({*self.failures, *other.failures})
        failures = {kind: max(self.failures.get(kind, 0), other.failures.get(kind, 0)) for kind in kinds}
        width = max(len(self.latency_ms), len(other.latency_ms))
        mine = self.latency_ms + [0] * (width - len(self.latency_ms))
        theirs = other.latency_ms + [0] * (width - len(other.latency_ms))
        counts = {name: max(getattr(self, name), getattr(other, name)) for name in _COUNTS}
        return RoleUse(**counts, failures=failures, latency_ms=list(map(max, mine, theirs)))

    def percentile_ms(self, q: float) -> float | None:
        """The upper bound of the latency bucket holding the q-th quantile of answered calls (None: none)."""
        total = sum(self.latency_ms)
        if not total:
            return None
        seen = 0
        for bound, count in zip(LATENCY_BOUNDS_MS, self.latency_ms, strict=False):
            seen += count
            if seen >= q * total:
                return bound
        return LATENCY_BOUNDS_MS[-1]

    def summary(self) -> dict[str, Any]:
        """As summary.json shows it: the counts, and latency percentiles instead of the histogram."""
        shown = self.model_dump(exclude={"latency_ms"})
        shown["failed"] = sum(self.failures.values())
        shown["latency_ms"] = {f"p{int(q * 100)}": self.percentile_ms(q) for q in (0.5, 0.9, 0.99)}
        return shown


_COUNTS = tuple(name for name, info in RoleUse.model_fields.items() if info.annotation in (int, "int"))
ModelUse = dict[str, RoleUse]  # role -> what its calls cost


def counted_use(model_use: dict[str, Any] | None, logged: dict[str, Any] | None) -> dict[str, RoleUse]:
    """A run's model use by role: what its checkpointed steps counted (`model_use`) and what its call log saw sent
    (`logged`), field by field the larger. The log holds the requests of steps a kill cut short (whose counts no
    checkpoint kept, and whose answers a resume takes from the cache) and the attempts that failed on the way; the
    state holds what the run did with the answers (repairs, fallbacks, unusable replies, cache hits, timings) and
    the calls of a model handle that writes no log."""
    counted, seen = model_use or {}, logged or {}
    return {
        role: RoleUse.model_validate(counted.get(role) or {}).at_least(RoleUse.model_validate(seen.get(role) or {}))
        for role in sorted({*counted, *seen})
    }


def merge_use(current: dict[str, Any] | None, update: dict[str, Any] | None) -> dict[str, Any]:
    """A graph-state reducer: add up per-role uses (as JSON) from concurrent nodes and successive steps."""
    merged = {role: RoleUse.model_validate(use) for role, use in (current or {}).items()}
    for role, use in (update or {}).items():
        merged[role] = merged.get(role, RoleUse()).add(RoleUse.model_validate(use))
    return {role: use.model_dump() for role, use in sorted(merged.items())}


class Meter:
    """What the model calls made in one context (one graph node, one benchmark task) cost, by role; and the run's
    response cache and call log, for callers that keep none of their own (a game master shared by every run of
    the process, a policy handed in by library code, a model in this process)."""

    def __init__(self, cache: ResponseCache | None = None, log: CallLog | None = None) -> None:
        self.use: ModelUse = {}
        self.cache = cache
        self.log = log

    def role(self, role: Role) -> RoleUse:
        return self.use.setdefault(role.value, RoleUse())

    def as_json(self) -> dict[str, Any]:
        return {role: use.model_dump() for role, use in self.use.items()}


_METER: ContextVar[Meter | None] = ContextVar("amphoreus_meter", default=None)


@contextmanager
def metered(cache: ResponseCache | None = None, log: CallLog | None = None) -> Iterator[Meter]:
    """Count the model calls made inside this block (and in tasks and threads it starts) on a fresh Meter; callers
    without a cache or call log of their own answer from `cache` and write to `log`."""
    meter = Meter(cache, log)
    token = _METER.set(meter)
    try:
        yield meter
    finally:
        _METER.reset(token)


def absorb(other: Meter) -> None:
    """Count on the current context's meter the calls another meter counted (work done in the background and
    claimed here), so that each call is counted once, where it is used."""
    meter = _meter()
    for role, use in other.use.items():
        meter.use[role] = meter.use.get(role, RoleUse()).add(use)


def _meter() -> Meter:
    """The current context's meter; calls made outside any `metered()` block are counted on a throwaway one."""
    return _METER.get() or Meter()


def count_local_call(
    role: Role, *, latency_s: float, tokens_in: int = 0, tokens_out: int = 0, failure: Failure | None = None
) -> None:
    """Count a call to a model that runs in this process (a trained checkpoint) as the gateway counts a request,
    so a run's totals hold every model call whichever way it was made (its call log too, where the meter has one)."""
    meter = _meter()
    if meter.log is not None:
        failed = None if failure is None else failure.value
        meter.log.local(role.value, failed=failed, tokens=(0, 0) if failed else (tokens_in, tokens_out))
    use = meter.role(role)
    use.calls += 1
    if failure is not None:
        use.failures[failure.value] = use.failures.get(failure.value, 0) + 1
        return
    _record_latency(use, latency_s * 1000)
    use.tokens_in += tokens_in
    use.tokens_out += tokens_out


def note(role: Role, *, repairs: int = 0, fallbacks: int = 0, garbage: int = 0) -> None:
    """Record what a caller did with replies: a repair pass asked, a stand-in used, a reply that did not parse."""
    use = _meter().role(role)
    use.repairs += repairs
    use.fallbacks += fallbacks
    if garbage:
        use.failures[Failure.GARBAGE.value] = use.failures.get(Failure.GARBAGE.value, 0) + garbage


def classify(exc: BaseException) -> Failure:
    """What kind of failure an exception from a chat model is (OpenAI-style clients and plain exceptions)."""
    name = type(exc).__name__
    status = getattr(exc, "status_code", None)
    if isinstance(exc, MalformedOutput):
        return Failure.GARBAGE
    if isinstance(exc, TimeoutError) or "Timeout" in name:
        return Failure.TIMEOUT
    if status == 429 or "RateLimit" in name:
        return Failure.RATE_LIMIT
    if isinstance(status, int):
        return Failure.HTTP_STATUS
    if "Connection" in name or isinstance(exc, ConnectionError):
        return Failure.CONNECTION
    return Failure.OTHER


def retry_after_s(exc: BaseException) -> float | None:
    """The wait a refusal asks for, if the exception carries its response: `retry-after-ms` (OpenAI's), else
    `Retry-After` in seconds or as an HTTP date."""
    headers = getattr(getattr(exc, "response", None), "headers", None)
    if not headers:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
    except (TypeError, ValueError):
        pass
    value = headers.get("retry-after") or headers.get("Retry-After")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(value))
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())


def _refused_for_good(exc: BaseException) -> bool:
    """A request refused as bad (4xx other than 429) will be refused again."""
    status = getattr(exc, "status_code", None)
    return classify(exc) is Failure.HTTP_STATUS and isinstance(status, int) and 400 <= status < 500


class _ClientLoop:
    """The event loop every model request is sent from, running on a daemon thread of its own (started on first
    use, and again in a forked child, which inherits the loop but not its thread). A coroutine submitted here
    runs in a copy of the submitter's context, so meters and tracing follow the call."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pid = 0

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid():
                loop = asyncio.new_event_loop()
                threading.Thread(target=loop.run_forever, name="model-gateway", daemon=True).start()
                self._loop, self._pid = loop, os.getpid()
            return self._loop

    def submit(self, work: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(work, self._running())

    @property
    def started(self) -> bool:
        """Whether this process has sent anything through the loop yet."""
        return self._loop is not None and self._pid == os.getpid()


_CLIENT_LOOP = _ClientLoop()


async def requests_sent() -> None:
    """Return once the client loop has started every request handed to it before this call (it runs what it is
    handed in order). Background work waits for this so as not to take the CPU from requests still being sent;
    only an ordering, best effort: a request whose sending waits on something else is not waited for."""

    async def nothing() -> None:
        return None

    if _CLIENT_LOOP.started:  # else nothing was ever sent: no loop to start for it (an offline run)
        await asyncio.wrap_future(_CLIENT_LOOP.submit(nothing()))


class _Slots:
    """The concurrency limit on one model's requests, kept on the client loop (where the requests wait)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._semaphore: asyncio.Semaphore | None = None

    def get(self) -> asyncio.Semaphore:
        if self._semaphore is None:
            self._semaphore = asyncio.Semaphore(self.limit)
        return self._semaphore


class ChatCaller:
    """One role's handle on a chat model: a concurrency slot, a timeout, our own retries (backing off, and
    honouring a 429's Retry-After); every attempt's cost is counted on the current Meter and on the caller's
    CallStats. Handles for other roles share the model, its slots, its endpoint's limiter and its response
    cache (`for_role`).

    `cache`: answer requests asked before from it, and store new answers in it. The endpoint's limiter (`limits.py`)
    starts at `max_concurrency`. A Retry-After longer than `max_retry_wait_s` is not waited for: the call fails."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        role: Role = Role.DECIDE,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        timeout_s: float = 60.0,
        attempts: int = 3,
        backoff_s: float = 0.5,
        slots: _Slots | None = None,
        cache: ResponseCache | None = None,
        max_retry_wait_s: float = 120.0,
        structured: str = "auto",
        log: CallLog | None = None,
        transport: Transport = Transport.LEAN,
    ) -> None:
        self.model = model
        self.role = role
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s
        self.max_retry_wait_s = max_retry_wait_s
        self._slots = slots or _Slots(max_concurrency)
        self._tagged = speaks_openai(model)
        self.endpoint = endpoint_of(model)
        self.limiter: EndpointLimiter = endpoint_limiter(self.endpoint, self._slots.limit)
        self.cache = cache
        if cache is not None:
            cache.users += 1
        self.log = log
        self._identity: dict[str, Any] | None = None
        self.structured = structured
        self._mode = structured_mode(model, structured)
        self.transport = Transport(transport)

    def for_role(self, role: Role) -> ChatCaller:
        """The same model, slots, limiter, cache, call log and retry policy, counted under another role."""
        return ChatCaller(
            self.model,
            role=role,
            timeout_s=self.timeout_s,
            attempts=self.attempts,
            backoff_s=self.backoff_s,
            slots=self._slots,
            cache=self.cache,
            max_retry_wait_s=self.max_retry_wait_s,
            structured=self.structured,
            log=self.log,
            transport=self.transport,
        )

    def _wait_s(self, state: RetryCallState) -> float:
        """Before the next attempt: what the refusal asked for (Retry-After), else an exponential backoff."""
        exc = state.outcome.exception() if state.outcome else None
        asked = retry_after_s(exc) if exc is not None else None
        if asked is not None:
            return asked
        return min(self.backoff_s * 2 ** (state.attempt_number - 1), self.backoff_s * 16)

    def _worth_retrying(self, exc: BaseException) -> bool:
        """Not a cancellation (the run is stopping), nor a request refused as bad (it would be refused again), nor
        one told to come back too late."""
        if not isinstance(exc, Exception) or _refused_for_good(exc):
            return False
        asked = retry_after_s(exc)
        return asked is None or asked <= self.max_retry_wait_s

    async def __call__(
        self, messages: list[BaseMessage], result: CallStats, *, reply_format: ReplyFormat | None = None
    ) -> AIMessage:
        """The model's reply to `messages` (from the cache, if it was asked before). `reply_format`: ask for a
        reply in this JSON schema where the endpoint offers native structured output (an endpoint that refuses
        it is asked again plainly, at once, and not asked with it again)."""
        meter = _meter()
        use = meter.role(self.role)
        cache = self.cache if self.cache is not None else meter.cache
        log = self.log if self.log is not None else meter.log
        options = self._options(reply_format, cache)
        if not options:
            return await self._answer(messages, result, use, options, cache, log)
        try:
            return await self._answer(messages, result, use, options, cache, log)
        except Exception as exc:
            if not refused_as_bad(exc):
                raise
        reply = await self._answer(messages, result, use, {}, cache, log)
        mode = str(self._mode)
        CAPABILITIES.mark_missing(self.endpoint, mode)
        if cache is not None:
            await asyncio.to_thread(cache.mark_unsupported, self.endpoint, mode)
        return reply

    def _options(self, reply_format: ReplyFormat | None, cache: ResponseCache | None) -> dict[str, Any]:
        """What the request asks of the model's output beyond the messages (part of the cache's key)."""
        mode = self._mode
        if reply_format is None or mode is None or not CAPABILITIES.offers(self.endpoint, mode):
            return {}
        if cache is not None and mode in cache.unsupported(self.endpoint):
            CAPABILITIES.mark_missing(self.endpoint, mode)
            return {}
        return reply_format.options(mode)

    async def _answer(
        self,
        messages: list[BaseMessage],
        result: CallStats,
        use: RoleUse,
        options: dict[str, Any],
        cache: ResponseCache | None,
        log: CallLog | None,
    ) -> AIMessage:
        """From the cache, from an identical request already in flight, or asked (and then stored)."""
        if cache is None:
            return await self._asked(messages, result, use, options, log)
        if self._identity is None:
            self._identity = model_identity(self.model)
        key = request_key(self._identity, messages, options)
        record = cache.get(key)
        if record is None:
            flight, leading = cache.flight(key)
            if leading:
                return await self._asked_and_kept(messages, result, use, options, cache, log, key, flight)
            record = await asyncio.shield(asyncio.wrap_future(flight))
            if record is None:  # the request it waited for failed: it asks for itself
                return await self._asked_and_kept(messages, result, use, options, cache, log, key, None)
        use.cache_hits += 1
        use.cached_tokens_in += int(record["usage"].get("input_tokens", 0))
        use.cached_tokens_out += int(record["usage"].get("output_tokens", 0))
        return reply_message(record)

    async def _asked_and_kept(
        self,
        messages: list[BaseMessage],
        result: CallStats,
        use: RoleUse,
        options: dict[str, Any],
        cache: ResponseCache,
        log: CallLog | None,
        key: str,
        flight: concurrent.futures.Future[dict[str, Any] | None] | None,
    ) -> AIMessage:
        """Asked, the reply stored, and the flight it leads (if any) landed: with the reply, or None if it failed."""
        try:
            reply = await self._asked(messages, result, use, options, log)
        except BaseException:
            if flight is not None:
                cache.land(key, flight, None)
            raise
        record = reply_record(reply)
        if flight is not None:
            cache.land(key, flight, record)
        await asyncio.to_thread(cache.put, key, record, model=model_name(self.model), role=self.role.value)
        return reply

    async def _asked(
        self,
        messages: list[BaseMessage],
        result: CallStats,
        use: RoleUse,
        options: dict[str, Any],
        log: CallLog | None,
    ) -> AIMessage:
        """Sent to the model, with our retries (each attempt written to the call log, if any)."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=self._wait_s,
            retry=retry_if_exception(self._worth_retrying),
            reraise=True,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    retry = attempt.retry_state.attempt_number > 1
                    if retry:
                        use.retries += 1
                        if "retried" not in result.flags:
                            result.flags.append("retried")
                    reply = await self._attempt(messages, result, use, options, _Sent(log, retry))
                    return reply
        finally:
            use.retry_wait_ms += round(float(retrying.statistics.get("idle_for", 0.0)) * 1000)
        raise AssertionError("unreachable: tenacity reraises the last error")

    async def _attempt(
        self, messages: list[BaseMessage], result: CallStats, use: RoleUse, options: dict[str, Any], sent: _Sent
    ) -> AIMessage:
        result.model_calls += 1
        use.calls += 1
        try:
            reply = await asyncio.wrap_future(_CLIENT_LOOP.submit(self._send(messages, options, sent)))
        except Exception as exc:
            result.failures += 1
            kind = classify(exc).value
            use.failures[kind] = use.failures.get(kind, 0) + 1
            raise
        finally:
            use.waits += sent.waited
            use.wait_ms += round(sent.waited_s * 1000)
            use.halvings += sent.halved
        _record_latency(use, sent.latency_s * 1000)
        _count_usage(reply, result, use)
        if not isinstance(reply, AIMessage):
            raise MalformedOutput(f"expected an AIMessage, got {type(reply).__name__}")
        return reply

    async def _send(self, messages: list[BaseMessage], options: dict[str, Any], sent: _Sent) -> BaseMessage:
        """One request, on the client loop: waits for a slot of its own and of its endpoint, then at most
        `timeout_s` for the answer (a wait in our own queue is not the server's slowness). What happened on the
        way is left in `sent`, for the caller to count on its own thread; the call log is written here, as the
        request goes out and as it comes back (or fails, or is cancelled: `interrupted`)."""
        async with self._slots.get():
            ticket: Ticket = await self.limiter.acquire()
            sent.waited, sent.waited_s = int(ticket.waited_s > 0), ticket.waited_s
            rate_limited = answered = False
            failed: str | None = Failure.INTERRUPTED.value
            tokens = (0, 0)
            log = sent.log
            number = 0 if log is None else log.sent(self.role.value, retry=sent.retry)
            started = time.perf_counter()
            try:
                async with asyncio.timeout(self.timeout_s):
                    reply = await send(
                        self.model,
                        messages,
                        {**self._request_options(), **provider_options(self.model, options)},
                        self.transport,
                    )
                answered, failed, tokens = True, None, _usage(reply)
                return reply
            except Exception as exc:
                failed = classify(exc).value
                rate_limited = failed == Failure.RATE_LIMIT
                raise
            finally:
                sent.latency_s = time.perf_counter() - started
                sent.halved = int(self.limiter.release(ticket, rate_limited=rate_limited, answered=answered))
                if log is not None:
                    log.done(number, failed=failed, tokens=tokens)

    def call_sync(
        self, messages: list[BaseMessage], result: CallStats, *, reply_format: ReplyFormat | None = None
    ) -> AIMessage:
        """The same call from synchronous code (memory's raters in a worker thread, an interview in a notebook)."""
        return run_blocking(self(messages, result, reply_format=reply_format))

    def _request_options(self) -> dict[str, Any]:
        """Tag each request with its role, for a server (or a proxy) to count by: OpenAI-style clients only."""
        return {"extra_headers": {ROLE_HEADER: self.role.value}} if self._tagged else {}


class _Sent:
    """What happened to one request on the client loop: its wait for a slot, whether its 429 halved the
    endpoint's concurrency, how long the model took; and where it is logged (`log`), as a retry or not."""

    __slots__ = ("halved", "latency_s", "log", "retry", "waited", "waited_s")

    def __init__(self, log: CallLog | None, retry: bool) -> None:
        self.log = log
        self.retry = retry
        self.waited = 0
        self.waited_s = 0.0
        self.halved = 0
        self.latency_s = 0.0


def endpoint_of(model: BaseChatModel) -> str:
    """What the limiter and capability records are kept by: the base URL, else the client's kind and model."""
    return endpoint_url(model) or f"{type(model).__name__}:{model_name(model)}"


def _record_latency(use: RoleUse, ms: float) -> None:
    bucket = min(bisect.bisect_left(LATENCY_BOUNDS_MS, ms), len(LATENCY_BOUNDS_MS) - 1)
    if len(use.latency_ms) <= bucket:
        use.latency_ms.extend([0] * (bucket + 1 - len(use.latency_ms)))
    use.latency_ms[bucket] += 1


def _usage(reply: BaseMessage) -> tuple[int, int]:
    """The tokens a reply says it took in and gave out."""
    usage = getattr(reply, "usage_metadata", None) or {}
    return int(usage.get("input_tokens", 0)), int(usage.get("output_tokens", 0))


def _count_usage(reply: BaseMessage, result: CallStats, use: RoleUse) -> None:
    tokens_in, tokens_out = _usage(reply)
    result.tokens_in += tokens_in
    result.tokens_out += tokens_out
    use.tokens_in += tokens_in
    use.tokens_out += tokens_out


async def ask(
    caller: ChatCaller,
    messages: list[BaseMessage],
    parse: Callable[[str], T],
    stats: CallStats,
    *,
    reply_format: ReplyFormat | None = None,
) -> tuple[T, AIMessage]:
    """Ask, and make something of the reply with `parse`; a reply it cannot use (MalformedOutput) is shown to the
    model once with what was wrong (a repair pass, flag `repaired`). Raises if the repaired reply fails too, or
    the calls do: the caller decides what stands in, and says so with `note(role, fallbacks=1)`. `reply_format`:
    the JSON schema to ask for natively, where the endpoint offers it (both passes)."""
    reply = await caller(messages, stats, reply_format=reply_format)
    try:
        return parse(reply_payload(reply)), reply
    except MalformedOutput as problem:
        note(caller.role, garbage=1, repairs=1)
        repair = f"That answer cannot be used: {problem}. Reply again with only the corrected JSON object."
        told: BaseMessage = (
            ToolMessage(repair, tool_call_id=reply.tool_calls[0].get("id") or "")
            if reply.tool_calls
            else HumanMessage(repair)
        )
        reply = await caller([*messages, reply, told], stats, reply_format=reply_format)
        try:
            parsed = parse(reply_payload(reply))
        except MalformedOutput:
            note(caller.role, garbage=1)
            raise
        stats.flags.append("repaired")
        return parsed, reply


def reply_payload(reply: AIMessage) -> str:
    """What a structured reply says: its first tool call's arguments (as JSON), else its text."""
    if reply.tool_calls:
        return json.dumps(reply.tool_calls[0]["args"])
    return reply_text(reply)


def reply_text(reply: AIMessage) -> str:
    content: Any = reply.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def model_caller(policy: object) -> ChatCaller | None:
    """The gateway handle through which a policy asks its chat model (None: it asks none)."""
    caller = getattr(policy, "caller", None)
    return caller if isinstance(caller, ChatCaller) else None


def unreachable_server(policy: object) -> str | None:
    """Why a policy's model server cannot be reached (None: it can, or there is no server to ask): an
    OpenAI-style endpoint is asked for its model list, which costs nothing. A run must not start with a model
    that cannot answer: every turn would fall back, under the model's name."""
    model = getattr(model_caller(policy), "model", None)
    base = getattr(model, "openai_api_base", None)
    if not base:
        return None
    try:
        httpx.get(f"{str(base).rstrip('/')}/models", timeout=5.0)
    except httpx.HTTPError as exc:
        return f"{base}: the model's server is unreachable ({type(exc).__name__})"
    return None


def run_blocking(work: Coroutine[Any, Any, T]) -> T:
    """Run a coroutine to its end from synchronous code: on this thread when no event loop runs here (the graph
    runs a sync node in a worker thread), else on a thread of its own, so a running loop is never re-entered."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(work)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="blocking") as pool:  # keeps this context's meter
        return pool.submit(contextvars.copy_context().run, asyncio.run, work).result()
