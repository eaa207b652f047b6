"""Concurrency per endpoint, adapting to rate limits: one `EndpointLimiter` per endpoint in the process, shared by
every caller of it (each role of a run, every society of a local Scepter run), whatever thread or event loop asks.
Processes that share an endpoint (the Ray workers of a Scepter run) each take a part of its limit
(`share_endpoints`), the parts adding up to the whole.

The policy is AIMD, as TCP's congestion control: the limit starts at the endpoint's `--max-concurrency` (its
ceiling); a 429 halves it (multiplicative decrease), once per episode: the 429s of requests sent before the last
halving say nothing new, so a burst of them halves once, not once each; calm brings it back up by one after every
`limit` answered requests in a row (additive increase: one more in flight per round of the current window), never
above the ceiling. Other failures (500s, timeouts) leave the limit alone: they are not the endpoint asking for
less. A request waits for a slot in arrival order; the waits, halvings and regrowths are counted.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

# Model calls in flight per endpoint at most, where nothing says otherwise: room for a 12-agent round's decisions and,
# beside them, its memory's calls (the importance rating and up to a dozen reflections). At 16, a round with more
# than three agents reflecting waited one whole call for a slot. Rate limits still halve it (AIMD above).
DEFAULT_CONCURRENCY = 32


@dataclass
class Ticket:
    """A slot held: the episode it was sent in, and how long it waited for the slot."""

    episode: int
    waited_s: float = 0.0


@dataclass
class _Waiter:
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[None]
    granted: bool = False


@dataclass
class LimiterStats:
    limit: int
    ceiling: int
    in_flight: int
    peak_in_flight: int
    waits: int
    halvings: int
    regrowths: int
    history: list[tuple[float, int]] = field(default_factory=list)


class EndpointLimiter:
    """At most `limit` requests in flight to one endpoint; thread- and loop-safe (a lock, and waiters woken on
    their own loops)."""

    def __init__(self, endpoint: str, ceiling: int) -> None:
        if ceiling < 1:
            raise ValueError(f"ceiling {ceiling}: expected at least 1")
        self.endpoint = endpoint
        self.ceiling = ceiling
        self.limit = ceiling
        self.in_flight = 0
        self.peak_in_flight = 0
        self.waits = 0
        self.halvings = 0
        self.regrowths = 0
        self._episode = 0
        self._calm = 0
        self._lock = threading.Lock()
        self._waiters: deque[_Waiter] = deque()
        self._history: list[tuple[float, int]] = [(time.monotonic(), ceiling)]

    def allow(self, ceiling: int) -> None:
        """Another caller of this endpoint names its limit: the ceiling is the highest named (each caller also
        keeps to its own). A limit at its old ceiling follows the new one up."""
        with self._lock:
            if ceiling > self.ceiling:
                if self.limit == self.ceiling:
                    self._set_limit(ceiling)
                self.ceiling = ceiling
                self._wake()

    async def acquire(self) -> Ticket:
        loop = asyncio.get_running_loop()
        with self._lock:
            if self.in_flight < self.limit and not self._waiters:
                self._take()
                return Ticket(self._episode)
            waiter = _Waiter(loop, loop.create_future())
            self._waiters.append(waiter)
            self.waits += 1
        started = time.perf_counter()
        try:
            await waiter.future
        except BaseException:
            with self._lock:
                if waiter.granted:  # the slot was handed over as the wait was cancelled: give it back
                    self.in_flight -= 1
                    self._wake()
                elif waiter in self._waiters:
                    self._waiters.remove(waiter)
            raise
        with self._lock:
            return Ticket(self._episode, time.perf_counter() - started)

    def release(self, ticket: Ticket, *, rate_limited: bool = False, answered: bool = False) -> bool:
        """Give the slot back, saying how the request went; True if this 429 halved the limit."""
        halved = False
        with self._lock:
            self.in_flight -= 1
            if rate_limited:
                self._calm = 0
                if ticket.episode == self._episode:  # the first 429 of requests sent since the last halving
                    self._episode += 1
                    self.halvings += 1
                    self._set_limit(max(1, self.limit // 2))
                    halved = True
            elif answered and self.limit < self.ceiling:
                self._calm += 1
                if self._calm >= self.limit:
                    self._calm = 0
                    self.regrowths += 1
                    self._set_limit(self.limit + 1)
            self._wake()
        return halved

    def stats(self) -> LimiterStats:
        with self._lock:
            return LimiterStats(
                limit=self.limit,
                ceiling=self.ceiling,
                in_flight=self.in_flight,
                peak_in_flight=self.peak_in_flight,
                waits=self.waits,
                halvings=self.halvings,
                regrowths=self.regrowths,
                history=list(self._history),
            )

    # under the lock

    def _take(self) -> None:
        self.in_flight += 1
        self.peak_in_flight = max(self.peak_in_flight, self.in_flight)

    def _set_limit(self, limit: int) -> None:
        self.limit = limit
        self._history.append((time.monotonic(), limit))
        del self._history[:-256]

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.limit:
            waiter = self._waiters.popleft()
            if waiter.future.cancelled():
                continue
            waiter.granted = True
            self._take()
            try:
                waiter.loop.call_soon_threadsafe(_grant, waiter.future)
            except RuntimeError:  # its loop is closed: nobody will take the slot
                self.in_flight -= 1


def _grant(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


_registry_lock = threading.Lock()
_registry: dict[str, EndpointLimiter] = {}
_share: int | None = None  # this process's part of every endpoint's limit; None: all of it


def share_endpoints(share: int | None) -> None:
    """Keep this process to `share` requests in flight per endpoint, whatever its callers name (a Ray worker of a
    Scepter run: the workers' shares add up to `--max-concurrency`); None lifts it. Limiters made before go."""
    global _share
    if share is not None and share < 1:
        raise ValueError(f"share {share}: expected at least 1")
    with _registry_lock:
        _share = share
        _registry.clear()


def endpoint_limiter(endpoint: str, ceiling: int) -> EndpointLimiter:
    """The process's limiter for `endpoint` (made on first use, its ceiling raised by a caller naming more, up to
    the process's share)."""
    with _registry_lock:
        if _share is not None:
            ceiling = min(ceiling, _share)
        limiter = _registry.get(endpoint)
        if limiter is None:
            limiter = _registry[endpoint] = EndpointLimiter(endpoint, ceiling)
            return limiter
    limiter.allow(ceiling)
    return limiter


def forget_limiters() -> None:
    """Drop every endpoint's limiter (tests: a later server may reuse an earlier one's port)."""
    with _registry_lock:
        _registry.clear()


def limiter_stats() -> dict[str, dict[str, Any]]:
    """Every endpoint's limiter, as the benchmarks print them."""
    with _registry_lock:
        limiters = list(_registry.values())
    out: dict[str, dict[str, Any]] = {}
    for limiter in limiters:
        stats = limiter.stats()
        out[limiter.endpoint] = {k: v for k, v in stats.__dict__.items() if k != "history"}
    return out
