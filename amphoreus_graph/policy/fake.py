"""ScriptedChatModel: a deterministic stand-in chat model for tests and benchmarks (not a real LLM).

It reads the options from the prompt and answers with a valid Decision as JSON (asked to judge: seeded 1-10
scores for the dimensions the prompt lists; asked to choose: a seeded choice), after an optional latency;
seeded fractions of calls raise or return malformed text, to exercise the fault handling. With
`quote_memories` it is a careless speaker: its speech quotes the first memory the prompt lists, secret or
not, as a model that ignores its instructions would (what the judges' discretion check must catch).
LangChain's own fakes lack `bind_tools`/structured output, hence this one.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import time
from collections import Counter
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import PrivateAttr

_CHOICES = re.compile(r"^Choose one of: (?P<names>.+)$", re.MULTILINE)
_DIMENSIONS = re.compile(r"^Dimensions: (?P<names>.+)$", re.MULTILINE)
_OPTION = re.compile(r"^- (?P<action>[a-z_]+)(?: \[(?P<targets>[^\]]*)\])?:", re.MULTILINE)
_MEMORY = re.compile(r"^- \(cycle \d+, round \d+\)(?: \([^)]*\))? (?P<text>.+)$", re.MULTILINE)


class ScriptedFailure(RuntimeError):
    """The fault a ScriptedChatModel injects on purpose."""


class ScriptedChatModel(BaseChatModel):
    latency_s: float = 0.0
    fail_rate: float = 0.0
    malformed_rate: float = 0.0
    seed: int = 0
    quote_memories: bool = False
    _calls: Counter[str] = PrivateAttr(default_factory=Counter)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def _reply(self, messages: list[BaseMessage]) -> AIMessage:
        prompt = "\n".join(str(m.content) for m in messages)
        key = hashlib.sha256(prompt.encode()).hexdigest()
        self._calls[key] += 1
        draw = _unit(f"{self.seed}|{key}|{self._calls[key]}")
        if draw < self.fail_rate:
            raise ScriptedFailure("scripted model failure")
        if draw < self.fail_rate + self.malformed_rate:
            content = "I would rather not answer in JSON today."
        elif choices := _CHOICES.search(prompt):
            names = choices["names"].split(", ")
            content = json.dumps({"choice": names[int(key[:8], 16) % len(names)]})
        elif dimensions := _DIMENSIONS.search(prompt):
            content = json.dumps(_judge(dimensions["names"].split(", "), key))
        else:
            content = json.dumps(_choose(prompt, key, quote=self.quote_memories))
        usage = {"input_tokens": len(prompt) // 4, "output_tokens": len(content) // 4}
        usage["total_tokens"] = usage["input_tokens"] + usage["output_tokens"]
        return AIMessage(content=content, usage_metadata=usage)  # type: ignore[arg-type]

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        time.sleep(self.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        await asyncio.sleep(self.latency_s)
        return ChatResult(generations=[ChatGeneration(message=self._reply(messages))])


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _choose(prompt: str, key: str, *, quote: bool = False) -> dict[str, Any]:
    """Pick an offered action (and its first target) from the prompt's option list; with `quote`, say aloud the
    first memory listed."""
    options = [(m["action"], (m["targets"] or "").split(", ")) for m in _OPTION.finditer(prompt)]
    if not options:
        return {"action": "withdraw", "target": None, "speech": "...", "rationale": "no options seen"}
    action, targets = options[int(key[:8], 16) % len(options)]
    target = targets[0] if targets and targets[0] else None
    speech = f"I choose to {action}."
    if quote and (memory := _MEMORY.search(prompt)):
        speech += f" I remember: {memory['text']}"
    return {"action": action, "target": target, "speech": speech, "rationale": "scripted"}


def _judge(dimensions: list[str], key: str) -> dict[str, Any]:
    """Seeded scores from 2 to 9 for each dimension asked about, after a token of reasoning."""
    scores = {d: 2 + int(_unit(f"{key}|{d}") * 8) for d in dimensions}
    return {"reasoning": "scripted judgement", "scores": scores}
