"""Expert judges: the Genius Society and the Nameless, offline or over any chat model (humans: experts graph)."""

from __future__ import annotations

from amphoreus_graph.data.judges.base import PANELS, Judge, JudgeItem, Panel, Verdict
from amphoreus_graph.data.judges.llm import LLMJudge
from amphoreus_graph.data.judges.offline import OfflineJudge
from amphoreus_graph.policy.llm import ChatCaller
from amphoreus_graph.policy.registry import resolve_chat_model

__all__ = ["PANELS", "Judge", "JudgeItem", "LLMJudge", "OfflineJudge", "Panel", "Verdict", "resolve_judge"]


def resolve_judge(spec: str, *, base_url: str | None = None, max_concurrency: int = 16) -> Judge:
    """`offline`, or any `--model` string for a model judge (scored at temperature 0)."""
    if spec == "offline":
        return OfflineJudge()
    scripted = spec.startswith("scripted:")
    chat = resolve_chat_model(spec, base_url=base_url, temperature=None if scripted else 0.0)
    caller = ChatCaller(chat, max_concurrency=max_concurrency, backoff_s=0.01 if scripted else 0.5)
    return LLMJudge(chat, name=spec, caller=caller)
