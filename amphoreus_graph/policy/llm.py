"""LLMPolicy: any langchain chat model decides, with retries, one repair pass and a flagged fallback.

A model call that raises or times out is retried with exponential backoff; output that does not parse
(or names an action or target that is not on offer) gets one repair pass that shows the model its
mistake; if that fails too, the offline Path policy decides and the sample is flagged `fallback`.
"""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, ValidationError
from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_attempt, wait_exponential_jitter

from amphoreus_graph.contracts.turn import CallStats, Decision, PolicyResult, TurnContext
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import render_messages


class MalformedOutput(ValueError):
    """The model answered, but not with what was asked (the message says what was wrong, for the repair)."""


ReplyT = TypeVar("ReplyT", bound=BaseModel)


def parse_reply(text: str, model: type[ReplyT], context: Any = None) -> ReplyT:
    """The JSON object in a reply (between its first `{` and last `}`), validated as `model` (`context`: what its
    validators check names against, e.g. a world's vocabulary)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        raise MalformedOutput("the reply holds no JSON object")
    try:
        return model.model_validate_json(text[start : end + 1], context=context)
    except ValidationError as exc:
        first = exc.errors()[0]
        raise MalformedOutput(f"{'.'.join(map(str, first['loc'])) or 'reply'}: {first['msg']}") from None


def parse_decision(text: str, turn: TurnContext) -> Decision:
    """Pull the Decision out of a reply and check it against the turn's options."""
    decision = parse_reply(text, Decision)
    problem = turn.problem_with(decision)
    if problem:
        raise MalformedOutput(problem)
    return decision


class _LoopSemaphores:
    """One semaphore per event loop, so a policy can be reused across `asyncio.run` calls."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._by_loop: dict[int, asyncio.Semaphore] = {}

    def get(self) -> asyncio.Semaphore:
        key = id(asyncio.get_running_loop())
        if key not in self._by_loop:
            self._by_loop[key] = asyncio.Semaphore(self.limit)
        return self._by_loop[key]


class ChatCaller:
    """One model call with a concurrency slot, a timeout and retries with exponential backoff; the cost
    and any retry are recorded on the caller's stats."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        max_concurrency: int = 16,
        timeout_s: float = 60.0,
        attempts: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self.model = model
        self.timeout_s = timeout_s
        self.attempts = attempts
        self.backoff_s = backoff_s
        self._slots = _LoopSemaphores(max_concurrency)

    async def __call__(self, messages: list[BaseMessage], result: CallStats) -> AIMessage:
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.attempts),
            wait=wait_exponential_jitter(initial=self.backoff_s, max=self.backoff_s * 16),
            retry=retry_if_exception_type(Exception),
            reraise=True,
        )
        async for attempt in retrying:
            with attempt:
                if attempt.retry_state.attempt_number > 1 and "retried" not in result.flags:
                    result.flags.append("retried")
                result.model_calls += 1
                try:
                    async with self._slots.get(), asyncio.timeout(self.timeout_s):
                        reply = await self.model.ainvoke(messages)
                except Exception:
                    result.failures += 1
                    raise
                _count_usage(reply, result)
                if not isinstance(reply, AIMessage):
                    raise MalformedOutput(f"expected an AIMessage, got {type(reply).__name__}")
                return reply
        raise AssertionError("unreachable: tenacity reraises the last error")


class LLMPolicy:
    """Decides through a chat model; never raises for a model fault, it falls back and says so."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        name: str = "llm",
        max_concurrency: int = 16,
        timeout_s: float = 60.0,
        attempts: int = 3,
        backoff_s: float = 0.5,
    ) -> None:
        self.name = name
        self.model = model
        self._call = ChatCaller(
            model, max_concurrency=max_concurrency, timeout_s=timeout_s, attempts=attempts, backoff_s=backoff_s
        )
        self._fallback = OfflinePathPolicy(salt="fallback")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        result = PolicyResult(decision=Decision(action=turn.offered[0] if turn.offered else ""))
        messages: list[BaseMessage] = [
            SystemMessage(m["content"]) if m["role"] == "system" else HumanMessage(m["content"])
            for m in render_messages(turn)
        ]
        try:
            reply = await self._call(messages, result)
            try:
                result.decision = parse_decision(reply_text(reply), turn)
                return result
            except MalformedOutput as first_problem:
                repair = [
                    *messages,
                    reply,
                    HumanMessage(
                        f"That answer cannot be used: {first_problem}. Reply again with only the corrected JSON object."
                    ),
                ]
                reply = await self._call(repair, result)
                result.decision = parse_decision(reply_text(reply), turn)
                result.flags.append("repaired")
                return result
        except Exception as exc:
            result.decision = self._fallback.decide(turn)
            result.flags.append("fallback")
            result.error = f"{type(exc).__name__}: {exc}"[:300]
            return result


def reply_text(reply: AIMessage) -> str:
    content: Any = reply.content
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") if isinstance(part, dict) else str(part) for part in content)


def _count_usage(reply: BaseMessage, result: CallStats) -> None:
    usage = getattr(reply, "usage_metadata", None) or {}
    result.tokens_in += int(usage.get("input_tokens", 0))
    result.tokens_out += int(usage.get("output_tokens", 0))
