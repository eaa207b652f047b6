"""A background thread that deletes a store's expired items every few minutes, as SqliteStore's and PostgresStore's
`start_ttl_sweeper` do (same interval rule: the argument, else the TTL config's `sweep_interval_minutes`, else 5)."""

from __future__ import annotations

import concurrent.futures
import logging
import threading
from collections.abc import Callable

from langgraph.store.base import TTLConfig

log = logging.getLogger(__name__)


class TTLSweeper:
    """Runs `sweep` (which returns how many items it deleted) on a daemon thread until stopped."""

    def __init__(self, sweep: Callable[[], int]) -> None:
        self._sweep = sweep
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self, config: TTLConfig | None, minutes: float | None) -> concurrent.futures.Future[None]:
        """A future done when the thread stops; cancelling it stops the thread. Without a TTL config, nothing runs."""
        future: concurrent.futures.Future[None] = concurrent.futures.Future()
        if not config:
            future.set_result(None)
            return future
        future.add_done_callback(lambda f: self._stop.set() if f.cancelled() else None)
        if self._thread is not None and self._thread.is_alive():
            return future
        self._stop.clear()
        interval = 60 * float(minutes or config.get("sweep_interval_minutes") or 5)
        self._thread = threading.Thread(target=self._loop, args=(interval, future), daemon=True, name="ttl-sweeper")
        self._thread.start()
        return future

    def stop(self, timeout: float | None) -> bool:
        """True once the thread has stopped (or never ran); False if it is still sweeping after `timeout` s."""
        if self._thread is None or not self._thread.is_alive():
            return True
        self._stop.set()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _loop(self, interval: float, future: concurrent.futures.Future[None]) -> None:
        while not self._stop.wait(interval):
            try:
                if swept := self._sweep():
                    log.info("store swept %d expired items", swept)
            except Exception:
                log.exception("store TTL sweep failed")
        if not future.done():
            future.set_result(None)
