"""What a `--model` family is given to reach a model: the endpoint, the key, the limits, and the run's shared
plumbing (response cache, call log, structured output, transport). A family registered from another package
(the `amphoreus_graph.policies` entry-point group) gets the same as the built-in chat models do."""

from __future__ import annotations

from dataclasses import dataclass

from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.gateway import Role
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.models.transport import Transport


@dataclass(frozen=True)
class ModelAccess:
    base_url: str | None = None
    api_key: str | None = None
    max_concurrency: int = DEFAULT_CONCURRENCY
    timeout_s: float = 60.0
    temperature: float | None = None
    attempts: int = 3
    role: Role = Role.DECIDE  # whose calls these are, in the run's model use
    cache: ResponseCache | None = None
    log: CallLog | None = None
    structured: str = "auto"
    transport: Transport = Transport.LEAN
