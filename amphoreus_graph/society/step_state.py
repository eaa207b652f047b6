"""What a node started by a `Send` reads of the state its step started from, so that the `Send` need not carry it.

A `Send`'s payload goes into the checkpoints twice (the sending task's writes, then the step's pending sends): a
turn carried whole (its perception, options and recalled memories) made every round store each agent's view of the
crowd around it, growing faster than the round's turns. LangGraph hands every task a reader of the channels its
step started from (its prebuilt ToolNode reads a tool call's state the same way); on a resume the channels are
those of the checkpoint the step started from, so what is read is what the first run read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langgraph._internal._constants import CONFIG_KEY_READ
from langgraph.config import get_config


def step_state(keys: Sequence[str]) -> dict[str, Any]:
    """The values of `keys` as the running task's step started (its own writes not applied); only in a task."""
    read = get_config().get("configurable", {}).get(CONFIG_KEY_READ)
    if read is None:
        raise RuntimeError("step_state: called outside a graph's task (LangGraph gave it no state to read)")
    return dict(read(list(keys), False))
