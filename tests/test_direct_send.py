"""The gateway's lean send for OpenAI-compatible models (models/transport.py): the same request on the wire and the same
reply as `ainvoke`, and `ainvoke` itself wherever LangChain's machinery has work to do (a callback handler or
tracer listening, a LangChain cache or rate limiter on the model)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from langchain_core.callbacks import AsyncCallbackHandler
from langchain_core.messages import HumanMessage, SystemMessage
from langchain_core.rate_limiters import InMemoryRateLimiter
from langchain_core.runnables import RunnableLambda

pytest.importorskip("langchain_openai")

from langchain_openai import ChatOpenAI
from langchain_openai.chat_models.base import BaseChatOpenAI

from amphoreus_graph.contracts.turn import CallStats
from amphoreus_graph.models.gateway import ChatCaller, Role
from amphoreus_graph.models.limits import forget_limiters
from amphoreus_graph.models.structured import ReplyFormat, provider_options
from amphoreus_graph.models.transport import Transport, send
from amphoreus_graph.society.config import RunConfig

MESSAGES = [SystemMessage("You are Cyrene."), HumanMessage("What do you do this round?")]
DECISION = ReplyFormat(
    name="decision",
    schema={"type": "object", "properties": {"action": {"type": "string"}}, "required": ["action"]},
)
KINDS = ["plain", "json_schema", "tools"]


@pytest.fixture(autouse=True)
def _fresh_limiters():
    forget_limiters()
    yield
    forget_limiters()


@pytest.fixture
def agenerate_calls(monkeypatch) -> list[int]:
    """How often a request went through LangChain's `_agenerate` or `_astream` (the `ainvoke` path) rather than the
    lean one."""
    calls: list[int] = []
    generate, stream = BaseChatOpenAI._agenerate, ChatOpenAI._astream

    async def counted(self: BaseChatOpenAI, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return await generate(self, *args, **kwargs)

    async def counted_stream(self: ChatOpenAI, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        async for chunk in stream(self, *args, **kwargs):
            yield chunk

    monkeypatch.setattr(BaseChatOpenAI, "_agenerate", counted)
    monkeypatch.setattr(ChatOpenAI, "_astream", counted_stream)
    return calls


def _same_reply(lean: Any, invoked: Any) -> None:
    assert lean.content == invoked.content
    assert [(c["name"], c["args"]) for c in lean.tool_calls] == [(c["name"], c["args"]) for c in invoked.tool_calls]
    assert lean.usage_metadata == invoked.usage_metadata
    for key in ("finish_reason", "model_name", "model_provider"):
        assert lean.response_metadata[key] == invoked.response_metadata[key]
    counts = [{k: v for k, v in m.response_metadata["token_usage"].items() if v is not None} for m in (lean, invoked)]
    assert counts[0] == counts[1]  # the SDK's typed reply adds the server's absent details as None


@pytest.mark.parametrize("kind", KINDS)
def test_the_lean_send_puts_the_same_request_on_the_wire_and_gives_the_same_reply(openai_server, agenerate_calls, kind):
    chat = openai_server.chat()
    asked = {} if kind == "plain" else provider_options(chat, DECISION.options(kind))
    options = {**asked, "extra_headers": {"X-Test": kind}}

    async def both() -> tuple[Any, Any]:
        return await send(chat, MESSAGES, dict(options)), await chat.ainvoke(MESSAGES, **options)

    lean, invoked = asyncio.run(both())
    assert agenerate_calls == [1]  # the first went the lean way, the second through ainvoke
    first, second = openai_server.log.entries()
    assert first.body == second.body and first.body["messages"][0]["content"] == "You are Cyrene."
    assert first.headers["x-test"] == second.headers["x-test"] == kind
    assert "extra_headers" not in first.body
    _same_reply(lean, invoked)
    if kind != "plain":
        assert (first.response_format, first.tools) == (
            ("json_schema", False) if kind == "json_schema" else (None, True)
        )


@pytest.mark.parametrize(("transport", "through_ainvoke"), [(Transport.LEAN, []), (Transport.AINVOKE, [1, 1])])
def test_the_transport_is_chosen_by_the_caller_and_kept_by_its_other_roles(
    openai_server, agenerate_calls, transport, through_ainvoke
):
    """`ainvoke` is LangChain's public path for every request; `lean` skips its wrapping where nothing listens."""
    caller = ChatCaller(openai_server.chat(), role=Role.DECIDE, transport=transport)

    async def twice() -> None:
        await caller(MESSAGES, CallStats())
        await caller.for_role(Role.IMPORTANCE)(MESSAGES, CallStats())

    asyncio.run(twice())
    assert agenerate_calls == through_ainvoke
    assert len(openai_server.log.entries()) == 2


def test_a_run_states_its_transport() -> None:
    assert RunConfig(scenario="amphoreus").transport is Transport.LEAN
    assert RunConfig(scenario="amphoreus", transport="ainvoke").transport is Transport.AINVOKE


class _Seen(AsyncCallbackHandler):
    def __init__(self) -> None:
        self.starts = 0

    async def on_chat_model_start(self, *args: Any, **kwargs: Any) -> None:
        self.starts += 1


def test_a_call_a_handler_listens_to_goes_through_ainvoke_and_is_seen(openai_server, agenerate_calls):
    """What Studio and LangSmith rely on: a call made under a config with callbacks still reaches them."""
    caller = ChatCaller(openai_server.chat(), role=Role.DECIDE)
    seen = _Seen()

    async def node(_: Any) -> str:
        return str((await caller(MESSAGES, CallStats())).content)

    async def run() -> None:
        await caller(MESSAGES, CallStats())  # nobody listening: the lean way
        await RunnableLambda(node).ainvoke(None, config={"callbacks": [seen]})

    asyncio.run(run())
    assert agenerate_calls == [1] and seen.starts == 1
    assert len(openai_server.log.entries()) == 2


@pytest.mark.parametrize(
    "setting",
    [{"rate_limiter": InMemoryRateLimiter(requests_per_second=1000)}, {"streaming": True}, {"verbose": True}],
    ids=["rate_limiter", "streaming", "verbose"],
)
def test_a_model_with_langchains_own_work_to_do_goes_through_ainvoke(openai_server, agenerate_calls, setting):
    chat = openai_server.chat(**setting)
    reply = asyncio.run(send(chat, MESSAGES, {}))
    assert reply.content and len(openai_server.log.entries()) == 1
    assert agenerate_calls == [1]
