"""`--model` strings to policies: `offline`, `random`, `longest`, `keywords`, `single-path:<Path>`, `pes:CKPT`,
`provider:model`, a model name with an OpenAI-compatible `--base-url`, `scripted:...` (the chat models among
them are made by models/chat.py)."""

from __future__ import annotations

from importlib import metadata

from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Policy
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.models.access import ModelAccess
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.chat import chat_caller
from amphoreus_graph.models.gateway import Role
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.models.transport import Transport
from amphoreus_graph.policy.baselines import KeywordPolicy, LongestPolicy, RandomPolicy, SinglePathPolicy
from amphoreus_graph.policy.llm import LLMPolicy
from amphoreus_graph.policy.offline import OfflinePathPolicy


def registered_policies() -> dict[str, metadata.EntryPoint]:
    """Policy families other packages register (`amphoreus_graph.policies` entry points: `prefix:ARG` → a factory
    `(arg, access: ModelAccess) -> Policy`, given the endpoint, key, limits, cache and call log the run has), loaded
    only when named, so their heavy imports stay out of other runs."""
    return {ep.name: ep for ep in metadata.entry_points(group="amphoreus_graph.policies")}


def resolve_model(
    spec: str,
    *,
    base_url: str | None = None,
    max_concurrency: int = DEFAULT_CONCURRENCY,
    timeout_s: float = 60.0,
    temperature: float | None = None,
    role: Role = Role.DECIDE,
    api_key: str | None = None,
    attempts: int = 3,
    cache: ResponseCache | None = None,
    structured: str = "auto",
    log: CallLog | None = None,
    transport: Transport = Transport.LEAN,
) -> Policy:
    """Turn a `--model` value into a Policy (its model calls counted under `role`, answered from `cache` where
    asked before, each request written to `log`); any problem is one ModelSpecError line."""
    if spec == "offline":
        return OfflinePathPolicy()
    if spec == "random":
        return RandomPolicy()
    if spec == "longest":
        return LongestPolicy()
    if spec == "keywords":
        return KeywordPolicy()
    if spec.startswith("single-path:"):
        path = spec.partition(":")[2]
        if path not in load_paths():
            raise ModelSpecError(f"--model {spec!r}: unknown Path {path!r}; expected one of {load_paths().names()}")
        return SinglePathPolicy(path)
    access = ModelAccess(
        base_url=base_url,
        api_key=api_key,
        max_concurrency=max_concurrency,
        timeout_s=timeout_s,
        temperature=temperature,
        attempts=attempts,
        role=role,
        cache=cache,
        log=log,
        structured=structured,
        transport=transport,
    )
    prefix, _, rest = spec.partition(":")
    if rest and prefix in (plugged := registered_policies()):  # e.g. pes:CKPT, registered by the train package
        return plugged[prefix].load()(rest, access)
    caller = chat_caller(
        spec,
        role=access.role,
        base_url=access.base_url,
        temperature=access.temperature,
        max_concurrency=access.max_concurrency,
        timeout_s=access.timeout_s,
        attempts=access.attempts,
        cache=access.cache,
        api_key=access.api_key,
        structured=access.structured,
        log=access.log,
        transport=access.transport,
    )
    return LLMPolicy(caller.model, name=spec, caller=caller)
