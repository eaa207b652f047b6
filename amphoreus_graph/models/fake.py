"""ScriptedChatModel: a deterministic stand-in chat model for tests and benchmarks (not a real LLM).

It reads the options from the prompt and answers with a valid Decision as JSON (asked to judge: seeded 1-10
scores for the dimensions the prompt lists; asked to choose: a seeded choice; asked to rate memories: a seeded
importance for each; asked to reflect: an insight citing the first memories listed; asked to resolve a round as a
world's game master: a plain resolution derived from the round's decisions, see `_resolve_round`), after an
optional latency; seeded fractions of calls raise or return malformed text, and its first `garbage_replies`
replies are garbage, to exercise the fault handling (the repair pass, then the fallback). With
`quote_memories` it is a careless speaker: its speech quotes the first memory the prompt lists, secret or
not, as a model that ignores its instructions would (what the discretion guard and the judges must catch); with
`heed_corrections` too, it listens when told so afterwards (the guard's SAID_A_SECRET) and quotes the first
memory not marked secret instead.
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
from pydantic import Field, PrivateAttr

from amphoreus_graph.contracts.turn import SAID_A_SECRET

_CHOICES = re.compile(r"^Choose one of: (?P<names>.+)$", re.MULTILINE)
_DIMENSIONS = re.compile(r"^Dimensions: (?P<names>.+)$", re.MULTILINE)
_OPTION = re.compile(r"^- (?P<action>[A-Za-z_]\w*)(?: \[(?P<targets>[^\]]*)\])?:", re.MULTILINE)
_MEMORY = re.compile(r"^- \(cycle \d+, round \d+\)(?: (?P<mark>\([^)]*\)))? (?P<text>.+)$", re.MULTILINE)
# A game master's prompt (amphoreus_graph/worlds/gm/prompt.py): its marker line, and its state and decisions as
# one-line JSON after these labels.
_GAME_MASTER = re.compile(r"^Resolve this round as the game master\.$", re.MULTILINE)
_GM_BLOCK = re.compile(r"^(?P<label>STATE|DECISIONS): (?P<json>.+)$", re.MULTILINE)
# Memory's raters (amphoreus_graph/memory: importance.py, reflection.py): how each prompt asks for its answer.
_IMPORTANCE = re.compile(r'Answer as JSON: \{"ratings"')
_REFLECTION = re.compile(r'Answer as JSON: \{"insight"')
_LISTED_MEMORY = re.compile(r"^(?P<number>\d+)\. (?P<text>.+)$", re.MULTILINE)
_GARBAGE = "I would rather not answer in JSON today."


class ScriptedFailure(RuntimeError):
    """The fault a ScriptedChatModel injects on purpose."""


class ScriptedChatModel(BaseChatModel):
    latency_s: float = 0.0
    fail_rate: float = 0.0
    malformed_rate: float = 0.0
    seed: int = 0
    quote_memories: bool = False
    heed_corrections: bool = Field(default=False, description="quoting, it keeps secrets once told it said one")
    garbage_replies: int = Field(default=0, ge=0, description="the first N replies are garbage, whatever is asked")
    _calls: Counter[str] = PrivateAttr(default_factory=Counter)
    _served: int = PrivateAttr(default=0)

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
        self._served += 1
        if draw < self.fail_rate + self.malformed_rate or self._served <= self.garbage_replies:
            content = _GARBAGE
        else:
            quote, heed = self.quote_memories, self.heed_corrections
            answer = scripted_answer(prompt, key, quote=quote, heed=heed)
            content = json.dumps(_choose(prompt, key, quote=quote, heed=heed) if answer is None else answer)
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


def scripted_answer(prompt: str, key: str, *, quote: bool = False, heed: bool = False) -> Any:
    """What one of the project's prompts asks for, picked deterministically by `key` (a hash of the prompt): a
    game master's resolution, a choice, a judge's scores, an importance, a reflection, an agent's Decision; None
    for a prompt it does not know. The test server answers from here too, so both stand-ins answer alike."""
    if _GAME_MASTER.search(prompt):
        return _resolve_round(prompt)
    if choices := _CHOICES.search(prompt):
        names = choices["names"].split(", ")
        return {"choice": names[int(key[:8], 16) % len(names)]}
    if dimensions := _DIMENSIONS.search(prompt):
        return _judge(dimensions["names"].split(", "), key)
    if _IMPORTANCE.search(prompt):
        return {"ratings": [1 + int(_digest(m["text"])[:8], 16) % 10 for m in _LISTED_MEMORY.finditer(prompt)]}
    if _REFLECTION.search(prompt):
        return _reflect(prompt)
    if _OPTION.search(prompt):
        return _choose(prompt, key, quote=quote, heed=heed)
    return None


def _reflect(prompt: str) -> dict[str, Any]:
    """An insight citing the first two memories the prompt lists (by their numbers)."""
    listed = [(int(m["number"]), m["text"]) for m in _LISTED_MEMORY.finditer(prompt)][:2]
    if not listed:
        return {"insight": "Nothing stands out yet.", "cites": []}
    return {"insight": "What stays with me: " + "; ".join(text for _, text in listed), "cites": [n for n, _ in listed]}


def _digest(text: str) -> str:
    """An event's own seed: the same rating whatever else its batch lists."""
    return hashlib.sha256(text.encode()).hexdigest()


def _unit(text: str) -> float:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") / 2**64


def _choose(prompt: str, key: str, *, quote: bool = False, heed: bool = False) -> dict[str, Any]:
    """Pick an offered action (and its first target) from the prompt's option list; with `quote`, say aloud the
    first memory listed (with `heed`, once told it said a secret: the first one not marked secret)."""
    told = heed and SAID_A_SECRET in prompt
    memory = next((m for m in _MEMORY.finditer(prompt) if not (told and m["mark"])), None)
    quoted = f" I remember: {memory['text']}" if quote and memory is not None else ""
    listed = prompt[prompt.find("Your options") :] if "Your options" in prompt else prompt
    options = [(m["action"], (m["targets"] or "").split(", ")) for m in _OPTION.finditer(listed)]
    if not options:
        return {"action": "withdraw", "target": None, "speech": "..." + quoted, "rationale": "no options seen"}
    action, targets = options[int(key[:8], 16) % len(options)]
    target = targets[0] if targets and targets[0] else None
    return {"action": action, "target": target, "speech": f"I choose to {action}.{quoted}", "rationale": "scripted"}


def _judge(dimensions: list[str], key: str) -> dict[str, Any]:
    """Seeded scores from 2 to 9 for each dimension asked about, after a token of reasoning."""
    scores = {d: 2 + int(_unit(f"{key}|{d}") * 8) for d in dimensions}
    return {"reasoning": "scripted judgement", "scores": scores}


def _resolve_round(prompt: str) -> dict[str, Any]:
    """A game master's plain resolution of the round its prompt shows: one event per decision (its target involved
    when that is an agent), a move for each decision the rules allow that aims at a place, and the clock nudged up
    by 1 where its range allows. Valid for any world, so the world's own rules take it from there."""
    blocks = {m["label"]: json.loads(m["json"]) for m in _GM_BLOCK.finditer(prompt)}
    state: dict[str, Any] = blocks.get("STATE", {})
    events: list[dict[str, Any]] = []
    changes: list[dict[str, Any]] = []
    for decision in blocks.get("DECISIONS", []):
        agent, target, kind = decision["agent"], decision.get("target"), decision.get("target_kind")
        deed = decision["action"].replace("_", " ") + (f" ({target})" if target else "")
        events.append(
            {
                "actor": agent,
                "text": f"{agent} set out to {deed}, and the game master let it be so.",
                "involved": [target] if kind == "agent" and target else [],
                "public": False,
                "importance": 3,
            }
        )
        if kind == "location" and target and not decision.get("refused"):
            changes.append({"type": "move", "agent": agent, "to": target})
    clock = state.get("clock")
    if clock and clock["value"] + 1 <= clock["max"]:
        changes.append({"type": "clock", "delta": 1})
    return {"events": events, "changes": changes}
