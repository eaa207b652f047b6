"""A Scepter run on a thread of its own, so that a test can watch (or kill) its workers while it runs."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from amphoreus_graph.scepter import Scepter, ScepterConfig


def start_scepter(plan: ScepterConfig) -> tuple[threading.Thread, dict[str, Any]]:
    """The running thread, and where its outcome lands: "summary", or "error" (surfaced by the test's asserts)."""
    outcome: dict[str, Any] = {}

    def drive() -> None:
        try:
            outcome["summary"] = asyncio.run(Scepter(plan).run())
        except BaseException as exc:  # surfaced by the caller's assertions
            outcome["error"] = exc

    thread = threading.Thread(target=drive)
    thread.start()
    return thread, outcome
