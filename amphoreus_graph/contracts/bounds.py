"""Bounds on the numbers a user may give, said once: each fits what stores it (a checkpoint's and SQLite's 64-bit
integers), so an out-of-range option is one line before anything runs, never a run that fails, or hangs, midway.
The CLI's options take their min/max from the models' fields, so they show these bounds in `--help`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

MIN_SEED, MAX_SEED = -(2**63), 2**63 - 1  # a signed 64-bit integer
MAX_COUNT = 1_000_000  # rounds, cycles, societies, concurrency, memories recalled: far past any run that fits a machine

Seed = Annotated[int, Field(ge=MIN_SEED, le=MAX_SEED)]
