"""How the gateway sends one request: the transport, chosen per run (`RunConfig.transport`, `--transport`).

- `ainvoke`: LangChain's public `ainvoke`, for every model.
- `lean` (the default): for an OpenAI-compatible chat model, a leaner way than `ainvoke`, described below; for
  any other model, or where the wrapping it skips has work to do, `ainvoke`.

`ainvoke` wraps the request in LangChain's Runnable machinery — a callback manager and run for every call, the
cache and rate-limiter hooks, the reply built in an executor thread — which costs ~1.7 ms of CPU a call on the
gateway's thread (2.6 ms in all against the test server; 0.9 ms without it). A round's twelve requests queue
behind one another for that CPU before the last of them is on the wire, so it lands on the round's critical path.

For a langchain-openai model that takes the plain chat-completions path, the lean send keeps every part that
decides what is sent and what comes back — the request body built by the model's own `_get_request_payload`,
posted by the OpenAI client it configured (its key, base URL, headers, HTTP client, and errors), the reply turned
into a message by its own `_create_chat_result` — and skips only the wrapping. It is used where that wrapping
does nothing: no callback handler or tracer listening (Studio's and LangSmith's traces keep every call), no
LangChain cache or rate limiter on the model, no streaming, not the Responses API. Anything else is `ainvoke`.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import httpx
from langchain_core.callbacks.manager import AsyncCallbackManager
from langchain_core.globals import get_llm_cache
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables.config import ensure_config


class Transport(StrEnum):
    """How a request leaves: `lean` keeps the default because it measured faster (docs/models.md)."""

    LEAN = "lean"
    AINVOKE = "ainvoke"


CHAT_COMPLETIONS = "/chat/completions"
LANGCHAIN_OPENAI_PARTS = ("_get_request_payload", "_create_chat_result", "_use_responses_api")
# what a request's payload may carry that the OpenAI client sends as request options, not in the body
REQUEST_OPTIONS = {
    "extra_headers": "headers",
    "extra_query": "params",
    "extra_body": "extra_json",
    "timeout": "timeout",
}


async def send(
    model: BaseChatModel,
    messages: list[BaseMessage],
    options: dict[str, Any],
    transport: Transport = Transport.LEAN,
) -> BaseMessage:
    """The model's reply to `messages`, asked with `options` (`ainvoke`'s keyword arguments) by `transport`."""
    if transport is Transport.AINVOKE or not _plain_openai(model) or _listened(model):
        return await model.ainvoke(messages, **options)
    payload: dict[str, Any] = model._get_request_payload(messages, **options)  # type: ignore[attr-defined]
    if payload.get("stream") or model._use_responses_api(payload):  # type: ignore[attr-defined]
        return await model.ainvoke(messages, **options)
    request_options = {REQUEST_OPTIONS[key]: payload.pop(key) for key in list(payload) if key in REQUEST_OPTIONS}
    response = await model.root_async_client.post(  # type: ignore[attr-defined]
        CHAT_COMPLETIONS, body=payload, cast_to=httpx.Response, options=request_options
    )
    result = model._create_chat_result(json.loads(response.content))  # type: ignore[attr-defined]
    generation = result.generations[0]
    # as `ainvoke` does: what the reply says of itself (model, finish reason, usage) joins the message's metadata
    generation.message.response_metadata = {
        **(result.llm_output or {}),
        **(generation.generation_info or {}),
        **generation.message.response_metadata,
    }
    return generation.message


def _plain_openai(model: BaseChatModel) -> bool:
    """A langchain-openai model whose requests take the plain chat-completions path, with nothing of LangChain's
    own around the request (cache, rate limiter, streaming, response headers)."""
    try:
        from langchain_openai.chat_models.base import BaseChatOpenAI
        from openai import AsyncAzureOpenAI, AsyncOpenAI
    except ImportError:
        return False
    if not isinstance(model, BaseChatOpenAI) or type(model)._agenerate is not BaseChatOpenAI._agenerate:
        return False
    client = getattr(model, "root_async_client", None)
    if not isinstance(client, AsyncOpenAI) or isinstance(client, AsyncAzureOpenAI):
        return False
    cached = model.cache is not False and (model.cache is not None or get_llm_cache() is not None)
    return not (
        cached
        or model.rate_limiter is not None
        or model.streaming
        or model.include_response_headers
        or not all(hasattr(model, name) for name in LANGCHAIN_OPENAI_PARTS)
    )


def _listened(model: BaseChatModel) -> bool:
    """Whether a callback handler or tracer would see this call (the caller's config, the model's own, tracing)."""
    config = ensure_config()
    manager = AsyncCallbackManager.configure(
        config.get("callbacks"), model.callbacks, model.verbose, config.get("tags"), model.tags
    )
    return bool(manager.handlers)
