"""Expert judges: the soundness and fidelity panels, offline or over any chat model (humans: experts graph)."""

from __future__ import annotations

from amphoreus_graph.data.judges.base import PANELS, Judge, JudgeItem, Panel, Verdict
from amphoreus_graph.data.judges.llm import LLMJudge
from amphoreus_graph.data.judges.offline import OfflineJudge
from amphoreus_graph.models.chat import chat_caller
from amphoreus_graph.models.gateway import Role
from amphoreus_graph.models.limits import DEFAULT_CONCURRENCY

__all__ = ["PANELS", "Judge", "JudgeItem", "LLMJudge", "OfflineJudge", "Panel", "Verdict", "resolve_judge"]


def resolve_judge(spec: str, *, base_url: str | None = None, max_concurrency: int = DEFAULT_CONCURRENCY) -> Judge:
    """`offline`, or any `--model` string for a model judge (scored at temperature 0)."""
    if spec == "offline":
        return OfflineJudge()
    caller = chat_caller(spec, role=Role.JUDGE, base_url=base_url, temperature=0.0, max_concurrency=max_concurrency)
    return LLMJudge(caller.model, name=spec, caller=caller)
