"""`--model` strings to policies: `offline`, `random`, `longest`, `keywords`, `single-path:<Path>`, `pes:CKPT`,
`provider:model`, a model name with an OpenAI-compatible `--base-url`, `scripted:...`."""

from __future__ import annotations

import os
from importlib import metadata
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError

from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.contracts.turn import Policy
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.policy.baselines import KeywordPolicy, LongestPolicy, RandomPolicy, SinglePathPolicy
from amphoreus_graph.policy.cache import ResponseCache
from amphoreus_graph.policy.call_log import CallLog
from amphoreus_graph.policy.fake import ScriptedChatModel
from amphoreus_graph.policy.gateway import ChatCaller, Role
from amphoreus_graph.policy.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.policy.llm import LLMPolicy
from amphoreus_graph.policy.offline import OfflinePathPolicy

_EXTRAS = {"openai": "openai", "anthropic": "anthropic", "ollama": "ollama"}


def _scripted(options: str) -> ScriptedChatModel:
    """`scripted:latency=0.5,fail=0.3,malformed=0.2,seed=1,quote=1,heed=1,garbage=2` (all optional; quote=1: speech
    quotes the first memory in the prompt, secret or not; heed=1: told it said a secret, it quotes one that is not;
    garbage=N: the model's first N replies are garbage)."""
    names = {
        "latency": "latency_s",
        "fail": "fail_rate",
        "malformed": "malformed_rate",
        "seed": "seed",
        "quote": "quote_memories",
        "heed": "heed_corrections",
        "garbage": "garbage_replies",
    }
    values: dict[str, float] = {}
    for item in filter(None, options.split(",")):
        key, _, value = item.partition("=")
        if key not in names:
            raise ModelSpecError(f"--model scripted:{options}: unknown option {key!r}; expected {sorted(names)}")
        try:
            values[names[key]] = float(value)
        except ValueError:
            raise ModelSpecError(f"--model scripted:{options}: {key} must be a number, got {value!r}") from None
    try:
        return ScriptedChatModel(**values)  # type: ignore[arg-type]
    except ValidationError as exc:
        first = exc.errors()[0]
        raise ModelSpecError(f"--model scripted:{options}: {first['loc'][0]}: {first['msg']}") from None


def registered_policies() -> dict[str, metadata.EntryPoint]:
    """Policy families other packages register (`amphoreus_graph.policies` entry points: `prefix:ARG` → a factory
    `(arg, *, temperature) -> Policy`), loaded only when named, so their heavy imports stay out of other runs."""
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
    prefix, _, rest = spec.partition(":")
    if rest and prefix in (plugged := registered_policies()):  # e.g. pes:CKPT, registered by the train package
        return plugged[prefix].load()(rest, temperature=temperature)
    caller = chat_caller(
        spec,
        role=role,
        base_url=base_url,
        temperature=temperature,
        max_concurrency=max_concurrency,
        timeout_s=timeout_s,
        attempts=attempts,
        cache=cache,
        api_key=api_key,
        structured=structured,
        log=log,
    )
    return LLMPolicy(caller.model, name=spec, caller=caller)


def chat_caller(
    spec: str,
    *,
    role: Role,
    base_url: str | None = None,
    temperature: float | None = None,
    max_concurrency: int = DEFAULT_CONCURRENCY,
    timeout_s: float = 60.0,
    attempts: int = 3,
    cache: ResponseCache | None = None,
    api_key: str | None = None,
    structured: str = "auto",
    log: CallLog | None = None,
) -> ChatCaller:
    """A `--model` string as a chat model behind the gateway, counted under `role` (judges, proposers, a world's
    game master, interviews)."""
    chat = resolve_chat_model(spec, base_url=base_url, temperature=temperature, timeout_s=timeout_s, api_key=api_key)
    return ChatCaller(
        chat,
        role=role,
        max_concurrency=max_concurrency,
        timeout_s=timeout_s,
        attempts=attempts,
        backoff_s=_backoff_s(chat),
        cache=cache,
        structured=structured,
        log=log,
    )


def _backoff_s(chat: BaseChatModel) -> float:
    """The scripted stand-in fails on purpose and instantly: retrying it needs no real backoff."""
    return 0.01 if isinstance(chat, ScriptedChatModel) else 0.5


# Providers whose clients retry on their own unless told not to: the gateway retries (and counts) instead.
_CLIENT_RETRIES_OFF = {"openai", "azure_openai", "anthropic", "groq", "mistralai", "fireworks", "together", "xai"}


def resolve_chat_model(
    spec: str,
    *,
    base_url: str | None = None,
    temperature: float | None = None,
    timeout_s: float | None = None,
    api_key: str | None = None,
) -> BaseChatModel:
    """`provider:model`, a model name with `base_url` (OpenAI-compatible) or `scripted:...` as a chat model.

    The client's own retries are turned off (the gateway's count what is sent), and a local OpenAI-compatible
    `base_url` needs no key: a placeholder is passed when none is set."""
    provider, _, model_name = spec.partition(":")
    if provider == "scripted":
        return _scripted(model_name)
    if not model_name:
        if base_url is None:
            raise ModelSpecError(
                f"--model {spec!r}: expected 'offline', 'provider:model' (e.g. openai:gpt-4o-mini) "
                "or a model name with --base-url"
            )
        provider, model_name = "openai", spec
    kwargs: dict[str, Any] = {}
    if api_key is not None:
        kwargs["api_key"] = api_key
    if base_url is not None:
        kwargs["base_url"] = base_url
        if provider == "openai" and api_key is None and not os.environ.get("OPENAI_API_KEY"):
            kwargs["api_key"] = "not-needed"  # vLLM, Ollama, LM Studio… ignore it; the client insists on one
    if temperature is not None:
        kwargs["temperature"] = temperature
    if provider in _CLIENT_RETRIES_OFF:
        kwargs["max_retries"] = 0
    if timeout_s is not None and provider in _CLIENT_RETRIES_OFF:
        kwargs["timeout"] = timeout_s
    try:
        from langchain.chat_models import init_chat_model

        return init_chat_model(model_name, model_provider=provider, **kwargs)
    except ImportError as exc:
        extra = _EXTRAS.get(provider)
        hint = f"pip install 'amphoreus-graph[{extra}]'" if extra else f"install the langchain-{provider} package"
        raise ModelSpecError(f"--model {spec!r}: the {provider!r} provider is not installed ({hint})") from exc
    except Exception as exc:
        raise ModelSpecError(f"--model {spec!r}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
