"""The experts graph: sampled turns of a run → alternatives → both panels → (a human) → DPO pairs on disk.

    select_turns → propose_alternatives → score_candidates → human_review ⟲ (only with `human`) → write_pairs

`amphoreus judge` runs it without a human; in Studio, `human: true` pauses at each judged turn with the
panels' best (A) and worst (B) candidates side by side, and resumes with a `HumanVerdict`
(`{"choice": "A" | "B" | "tie", "reason": "..."}`). Every node reports what it did as a custom stream event
(`turns_selected`, `candidates_proposed`, `candidates_scored`, `turn_reviewed`, `pairs_written`).

A model judge whose reply cannot be used has the offline panels stand in for that verdict (flag `fallback`); the
report counts them and each DPO row says how many of its verdicts were theirs (`fallback_verdicts`). When every
verdict fell back, the model judged nothing: the graph stops (`RunStopped`, exit 3) before anything is written,
rather than write the offline panels' pairs under the model's name.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

from langgraph.config import get_stream_writer
from langgraph.graph import END, START, StateGraph
from langgraph.types import interrupt
from pydantic import ValidationError
from typing_extensions import TypedDict  # pydantic needs typing_extensions' TypedDict on 3.11

from amphoreus_graph.catalogs.scenario import catalog_for
from amphoreus_graph.contracts.events import (
    CandidatesProposed,
    CandidatesScored,
    PairsWritten,
    TurnReviewed,
    TurnsSelected,
)
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import TurnContext
from amphoreus_graph.data.candidates import (
    Candidate,
    discreet_candidate,
    offline_alternatives,
    original,
    sampled_alternatives,
)
from amphoreus_graph.data.dpo import (
    HumanVerdict,
    Judgement,
    ScoredCandidate,
    in_path_win_rate,
    write_dpo,
)
from amphoreus_graph.data.experts_input import ExpertsInput
from amphoreus_graph.data.judges import JudgeItem, OfflineJudge, resolve_judge
from amphoreus_graph.data.judges.base import Panel, Verdict
from amphoreus_graph.errors import AmphoreusError, RunStopped, graph_input
from amphoreus_graph.layout import JudgedDir, RunDir
from amphoreus_graph.models.gateway import Role, RoleUse, merge_use, metered
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.run_dir import newest_run
from amphoreus_graph.society.samples import Sample, iter_samples
from amphoreus_graph.society.services import SocietySettings

JSON = dict[str, Any]


class ExpertsState(TypedDict, total=False):
    run_dir: str
    out_dir: str
    judge: str
    proposer: str
    alternatives: int
    max_turns: int
    seed: int
    min_margin: float
    balance_acts: bool
    exclude_guarded: bool
    human: bool
    base_url: str | None
    turns: list[JSON]
    candidates: dict[str, list[JSON]]
    judgements: list[JSON]
    review_index: int
    review_error: str
    model_use: Annotated[JSON, merge_use]  # the proposers' and judges' model calls, by role
    report: JSON


def request_of(state: ExpertsState) -> ExpertsInput:
    """The input with defaults applied (LangGraph hands dict inputs over without the pydantic schema)."""
    return graph_input(ExpertsInput, state, "experts input")


def select_turns(state: ExpertsState) -> dict[str, Any]:
    """Draw a seeded sample of the run's turns, streaming through its shards."""
    request = request_of(state)
    if not request.run_dir:
        request.run_dir = str(newest_run(Path(SocietySettings().runs_dir)))
    folder = RunDir(Path(request.run_dir)).samples
    if not folder.is_dir():
        raise AmphoreusError(f"{folder}: no such directory; expected a run written by `amphoreus simulate`")
    chosen: list[Sample] = []
    seen = 0
    for seen, sample in enumerate((s for s in iter_samples(folder) if s.context is not None), 1):
        if len(chosen) < request.max_turns:
            chosen.append(sample)
            continue
        if seen == request.max_turns + 1:  # drawn by the run's name, not its directory: a moved run draws alike
            rng = stable_rng("experts", request.seed, chosen[0].run)
        if (slot := rng.randrange(seen)) < request.max_turns:
            chosen[slot] = sample  # reservoir sampling: every turn equally likely, memory bounded
    if not chosen:
        raise AmphoreusError(f"{folder}: no samples with a recorded turn context to judge")
    chosen.sort(key=lambda s: (s.cycle, s.round, s.agent))
    get_stream_writer()(TurnsSelected(run_dir=request.run_dir, turns=len(chosen), of=seen).payload())
    return {
        **request.model_dump(mode="json"),
        "turns": [s.model_dump(mode="json") for s in chosen],
        "review_index": 0,
    }


async def propose_alternatives(state: ExpertsState) -> dict[str, Any]:
    """The original decision plus K alternatives for every selected turn."""
    request = request_of(state)
    samples = [Sample.model_validate(t) for t in state["turns"]]
    if request.proposer == "offline":
        found = await asyncio.to_thread(
            lambda: [offline_alternatives(s, _context(s), request.alternatives, request.seed) for s in samples]
        )
    else:
        policy = resolve_model(request.proposer, base_url=request.base_url, temperature=1.0, role=Role.PROPOSE)
        with metered() as meter:
            found = await asyncio.gather(
                *(sampled_alternatives(s, _context(s), request.alternatives, policy) for s in samples)
            )
        spent = meter.as_json()
    candidates = {  # as the society's guard would let them be said: none gives a secret of the turn away
        s.id: [discreet_candidate(c, _context(s)).model_dump(mode="json") for c in [original(s), *alternatives]]
        for s, alternatives in zip(samples, found, strict=True)
    }
    total = sum(map(len, candidates.values()))
    get_stream_writer()(CandidatesProposed(turns=len(samples), candidates=total).payload())
    return {"candidates": candidates, "model_use": spent if request.proposer != "offline" else {}}


async def score_candidates(state: ExpertsState) -> dict[str, Any]:
    """Both panels score every candidate of every turn in one batch."""
    request = request_of(state)
    judge = resolve_judge(request.judge, base_url=request.base_url)
    samples = [Sample.model_validate(t) for t in state["turns"]]
    owners = [(s, Candidate.model_validate(c)) for s in samples for c in state["candidates"][s.id]]
    with metered() as meter:
        verdicts = await judge.ascore([JudgeItem(turn=_context(s), decision=c.decision) for s, c in owners])
    given, fell_back = fallback_count(verdicts)
    if given and fell_back == given:
        use = meter.use.get(Role.JUDGE.value, RoleUse())
        raise RunStopped(
            f"--judge {request.judge}: no verdict was the model's: all {given} fell back to the offline panels "
            f"({use.calls} calls, {sum(use.failures.values())} failed or unusable); nothing was written. Fix the "
            "model or its server, or judge with --judge offline"
        )
    by_turn: dict[str, list[ScoredCandidate]] = {}
    for (sample, candidate), verdict in zip(owners, verdicts, strict=True):
        by_turn.setdefault(sample.id, []).append(ScoredCandidate(candidate=candidate, verdicts=verdict))
    judgements = [
        Judgement(
            sample_id=s.id,
            run=s.run,
            world=s.world,
            cycle=s.cycle,
            round=s.round,
            agent=s.agent,
            path=s.path,
            judge=judge.name,
            prompt=s.messages[:-1],
            candidates=by_turn[s.id],
        )
        for s in samples
    ]
    get_stream_writer()(CandidatesScored(turns=len(samples), candidates=len(owners), judge=judge.name).payload())
    return {"judgements": [j.model_dump(mode="json") for j in judgements], "model_use": meter.as_json()}


def fallback_count(verdicts: list[dict[Panel, Verdict]]) -> tuple[int, int]:
    """(verdicts given, how many of them the offline panels gave standing in for a model judge)."""
    given = [v for panels in verdicts for v in panels.values()]
    return len(given), sum("fallback" in v.flags for v in given)


def human_review(state: ExpertsState) -> dict[str, Any]:
    """Show a human the panels' best (A) and worst (B) candidates for one turn; record the verdict."""
    index = state.get("review_index", 0)
    judgement = Judgement.model_validate(state["judgements"][index])
    a, b = judgement.proposed_pair()
    answer = interrupt(
        {
            "question": f"Which decision is truer to {judgement.agent}'s Path of {judgement.path}?",
            "turn": f"{judgement.sample_id} ({index + 1} of {len(state['judgements'])})",
            "situation": judgement.prompt[-1]["content"],
            "A": _shown(a),
            "B": _shown(b),
            "answer_schema": HumanVerdict.model_json_schema(),
            "error": state.get("review_error", ""),
        }
    )
    try:
        verdict = HumanVerdict.model_validate(answer)
    except ValidationError as exc:
        return {"review_error": f"{exc.errors()[0]['msg']}; expected {{'choice': 'A' | 'B' | 'tie'}}"}
    judgements = list(state["judgements"])
    judgements[index] = judgement.model_copy(update={"human": verdict}).model_dump(mode="json")
    reviewed = TurnReviewed(turn=judgement.sample_id, index=index + 1, of=len(judgements), choice=verdict.choice)
    get_stream_writer()(reviewed.payload())
    return {"judgements": judgements, "review_index": index + 1, "review_error": ""}


def after_score(state: ExpertsState) -> str:
    return "human_review" if request_of(state).human else "write_pairs"


def after_review(state: ExpertsState) -> str:
    return "human_review" if state.get("review_index", 0) < len(state["judgements"]) else "write_pairs"


def write_pairs(state: ExpertsState) -> dict[str, Any]:
    """judgements.jsonl (every candidate's verdicts), dpo.jsonl + card, summary.json (agreement, win rate)."""
    request = request_of(state)
    judged = JudgedDir(Path(request.out_dir)) if request.out_dir else RunDir(Path(request.run_dir)).judged
    out = judged.root
    out.mkdir(parents=True, exist_ok=True)
    judgements = [Judgement.model_validate(j) for j in state["judgements"]]
    with open(judged.judgements, "w", encoding="utf-8") as handle:
        handle.writelines(j.model_dump_json() + "\n" for j in judgements)
    dpo = write_dpo(
        judgements,
        out,
        min_margin=request.min_margin,
        balance_acts=request.balance_acts,
        exclude_guarded=request.exclude_guarded,
    )
    verdicts, fallbacks = fallback_count([c.verdicts for j in judgements for c in j.candidates])
    report = {
        "judged_turns": len(judgements),
        "candidates": sum(len(j.candidates) for j in judgements),
        "verdicts": verdicts,
        "fallbacks": fallbacks,
        "pairs": dpo.pairs,
        "ties_dropped": dpo.ties_dropped,
        "dropped_for_balance": dpo.dropped_for_balance,
        "guarded": dpo.guarded,
        "decided_by_human": dpo.decided_by_human,
        "agreement_rate": dpo.agreement_rate,
        "in_path_win_rate": in_path_win_rate(judgements),
        "judge": request.judge,
        "calibration": _calibration(request.judge, _context(Sample.model_validate(state["turns"][0])).world),
        "files": [str(judged.judgements), str(judged.pairs)],
        "models": {role: RoleUse.model_validate(use).summary() for role, use in (state.get("model_use") or {}).items()},
    }
    judged.summary.write_text(json.dumps(report, indent=2), encoding="utf-8")
    written = PairsWritten(
        pairs=dpo.pairs, ties_dropped=dpo.ties_dropped, dropped_for_balance=dpo.dropped_for_balance, out_dir=str(out)
    )
    get_stream_writer()(written.payload())
    return {"report": report}


def build_experts_graph() -> StateGraph[Any, None, Any, Any]:
    builder = StateGraph(ExpertsState, input_schema=ExpertsInput)
    builder.add_node("select_turns", select_turns)
    builder.add_node("propose_alternatives", propose_alternatives)
    builder.add_node("score_candidates", score_candidates)
    builder.add_node("human_review", human_review)
    builder.add_node("write_pairs", write_pairs)
    builder.add_edge(START, "select_turns")
    builder.add_edge("select_turns", "propose_alternatives")
    builder.add_edge("propose_alternatives", "score_candidates")
    builder.add_conditional_edges("score_candidates", after_score, ["human_review", "write_pairs"])
    builder.add_conditional_edges("human_review", after_review, ["human_review", "write_pairs"])
    builder.add_edge("write_pairs", END)
    return builder


def _context(sample: Sample) -> TurnContext:
    assert sample.context is not None, "select keeps only samples with a turn context"
    return sample.context


def _shown(scored: ScoredCandidate) -> JSON:
    return {
        "decision": scored.candidate.decision.model_dump(mode="json"),
        "score": scored.score,
        "panels": {p: {"scores": v.scores, "reasoning": v.reasoning} for p, v in scored.verdicts.items()},
    }


def _calibration(judge: str, world: str) -> JSON | None:
    """How the offline Path classifier does on held-out text, over the Path catalog of the judged run's world."""
    if judge != "offline":
        return None
    return OfflineJudge().classifier_for(catalog_for(world)).calibration.model_dump()
