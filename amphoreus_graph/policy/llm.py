"""LLMPolicy: any langchain chat model decides, through the model gateway, with one repair pass and a flagged
fallback. Where the endpoint offers native structured output, the reply is asked for in the turn's Decision schema
(its offered actions as an enum: models/structured.py); the reply is parsed and checked the same way either way.

A model call that raises or times out is retried by the gateway; output that does not parse (or names an
action or target that is not on offer) gets one repair pass that shows the model its mistake; if that fails
too, the offline Path policy decides: the result says so (`decided_by`, flag `fallback`, the error's kind and
message), never passing the stand-in's decision off as the model's.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage

from amphoreus_graph.contracts.actions import TargetKind
from amphoreus_graph.contracts.turn import Decision, PolicyResult, TurnContext
from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.gateway import ChatCaller, MalformedOutput, Role, ask, classify, note
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY
from amphoreus_graph.models.replies import parse_reply
from amphoreus_graph.models.structured import ReplyFormat
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import decision_json, render_messages


def parse_decision(text: str, turn: TurnContext) -> Decision:
    """Pull the Decision out of a reply and check it against the turn's options."""
    decision = parse_reply(text, Decision)
    problem = turn.problem_with(decision)
    if problem:
        raise MalformedOutput(problem)
    return decision


def decision_format(turn: TurnContext) -> ReplyFormat:
    """A Decision for this turn: one of its offered actions, one of the targets on offer (or none), speech and a
    rationale. Strict mode's rules: every property required, no others."""
    fields = Decision.model_fields
    listed = list(dict.fromkeys(target for option in turn.options for target in option.targets))
    target: dict[str, Any]
    if any(option.target is TargetKind.TEXT for option in turn.options):
        target = {"type": ["string", "null"]}
    elif listed:
        target = {"anyOf": [{"type": "string", "enum": listed}, {"type": "null"}]}
    else:
        target = {"type": "null"}
    properties: dict[str, Any] = {
        "action": {"type": "string", "enum": turn.offered},
        "target": target,
        "speech": {"type": "string"},
        "rationale": {"type": "string"},
    }
    for name, schema in properties.items():
        if description := fields[name].description:
            schema["description"] = description
    return ReplyFormat(
        name="decision",
        schema={
            "type": "object",
            "properties": properties,
            "required": list(properties),
            "additionalProperties": False,
        },
    )


class LLMPolicy:
    """Decides through a chat model; never raises for a model fault, it falls back and says so."""

    def __init__(
        self,
        model: BaseChatModel,
        *,
        name: str = "llm",
        role: Role = Role.DECIDE,
        max_concurrency: int = DEFAULT_CONCURRENCY,
        timeout_s: float = 60.0,
        attempts: int = 3,
        backoff_s: float = 0.5,
        cache: ResponseCache | None = None,
        caller: ChatCaller | None = None,
    ) -> None:
        """`caller`: the model's handle behind the gateway, made already (its settings then win over these)."""
        self.name = name
        self.model = model
        self.caller = caller or ChatCaller(
            model,
            role=role,
            max_concurrency=max_concurrency,
            timeout_s=timeout_s,
            attempts=attempts,
            backoff_s=backoff_s,
            cache=cache,
        )
        self._fallback = OfflinePathPolicy(salt="fallback")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        result = PolicyResult(decision=Decision(action=turn.offered[0] if turn.offered else ""))
        try:
            result.decision, _ = await ask(
                self.caller,
                turn_messages(turn),
                lambda text: parse_decision(text, turn),
                result,
                reply_format=decision_format(turn),
            )
            result.decided_by = self.name
            return result
        except Exception as exc:
            note(self.caller.role, fallbacks=1)
            result.decision = self._fallback.decide(turn)
            result.decided_by = f"{self._fallback.name} (fallback)"
            result.flags.append("fallback")
            result.error = f"{classify(exc).value}: {type(exc).__name__}: {exc}"[:300]
            return result

    async def areconsider(
        self, turn: TurnContext, decision: Decision, result: PolicyResult, instruction: str
    ) -> Decision | None:
        """Shown its decision and what is wrong with it, the model answers again (the discretion guard asks,
        policy/discretion.py); counted on `result` like any call. None if that call fails: the guard redacts."""
        messages = [*turn_messages(turn), AIMessage(decision_json(decision)), HumanMessage(instruction)]
        try:
            again, _ = await ask(
                self.caller,
                messages,
                lambda text: parse_decision(text, turn),
                result,
                reply_format=decision_format(turn),
            )
        except Exception:  # the gateway counted the failure; what was decided stands, redacted
            return None
        return again


def turn_messages(turn: TurnContext) -> list[BaseMessage]:
    """The turn as a chat model is asked it."""
    return [
        SystemMessage(m["content"]) if m["role"] == "system" else HumanMessage(m["content"])
        for m in render_messages(turn)
    ]
