"""`--model` strings to chat models behind the gateway: `provider:model`, a model name with an OpenAI-compatible
`--base-url`, or `scripted:...` (the deterministic stand-in). What every layer that asks a model uses: a run's
decider, memory's raters, judges, proposers, a world's game master, interviews."""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from pydantic import ValidationError

from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.call_log import CallLog
from amphoreus_graph.models.fake import ScriptedChatModel
from amphoreus_graph.models.gateway import ChatCaller, Role
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.models.transport import Transport

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
    transport: Transport = Transport.LEAN,
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
        transport=transport,
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
