"""Judged turns to DPO preference pairs in TRL's conversational format, and how much the panels agree.

A judged turn holds every candidate with both panels' verdicts. The pair is chosen = the best candidate
(by the mean of the two panels, or the human expert's pick), rejected = the lowest-scored one; pairs whose
margin is below `min_margin` are dropped as ties. Rows: `prompt` = the system and user messages, `chosen`
and `rejected` = one assistant message each (the Decision as JSON), plus metadata columns.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from amphoreus_graph.bench.contamination import is_contaminated
from amphoreus_graph.data.balance import balanced_by_act
from amphoreus_graph.data.candidates import Candidate
from amphoreus_graph.data.judges.base import Panel, Verdict
from amphoreus_graph.data.shortcuts import ShortcutProbe, offline_written, probe_pairs, reply_decision
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import JudgedDir
from amphoreus_graph.policy.discretion import guarded
from amphoreus_graph.policy.prompt import decision_json
from amphoreus_graph.society.samples import iter_rows


class HumanVerdict(BaseModel):
    """A human expert's answer when shown candidates A and B side by side."""

    choice: Literal["A", "B", "tie"] = Field(description="the better candidate, or tie to drop the pair")
    reason: str = Field(default="", description="optional: why")


class ScoredCandidate(BaseModel):
    candidate: Candidate
    verdicts: dict[Panel, Verdict]

    @property
    def score(self) -> float:
        """Both panels weigh the same."""
        return round(statistics.fmean(v.overall for v in self.verdicts.values()), 4)

    def panel_score(self, panel: Panel) -> float:
        return self.verdicts[panel].overall


class Judgement(BaseModel):
    """One judged turn: the prompt the agent saw, every candidate with its verdicts, and any human verdict."""

    sample_id: str
    run: str
    world: str = Field(default="", description="the world the turn was lived in (its sample's world)")
    cycle: int
    round: int
    agent: str
    path: str
    judge: str
    prompt: list[dict[str, str]]
    candidates: list[ScoredCandidate]
    human: HumanVerdict | None = None

    def ranked(self) -> list[ScoredCandidate]:
        return sorted(self.candidates, key=lambda c: (-c.score, c.candidate.id))

    def proposed_pair(self) -> tuple[ScoredCandidate, ScoredCandidate]:
        """The panels' best and worst candidates: what a human is shown as A and B."""
        ranked = self.ranked()
        return ranked[0], ranked[-1]


class DpoPair(BaseModel):
    judgement: Judgement
    chosen: ScoredCandidate
    rejected: ScoredCandidate
    decided_by: Literal["panels", "human"]

    @property
    def margin(self) -> float:
        return round(self.chosen.score - self.rejected.score, 4)

    @property
    def guarded(self) -> bool:
        """Whether either reply is one the discretion guard changed because it said a secret."""
        return guarded(self.chosen.candidate.flags) or guarded(self.rejected.candidate.flags)

    def row(self) -> dict[str, Any]:
        """TRL's conversational preference format plus metadata columns."""
        j = self.judgement
        return {
            "prompt": j.prompt,
            "chosen": [{"role": "assistant", "content": decision_json(self.chosen.candidate.decision)}],
            "rejected": [{"role": "assistant", "content": decision_json(self.rejected.candidate.decision)}],
            "id": j.sample_id,
            "run": j.run,
            "world": j.world,
            "cycle": j.cycle,
            "round": j.round,
            "agent": j.agent,
            "path": j.path,
            "judge": j.judge,
            "decided_by": self.decided_by,
            "chosen_origin": self.chosen.candidate.origin,
            "rejected_origin": self.rejected.candidate.origin,
            "chosen_writer": self.chosen.candidate.writer,
            "rejected_writer": self.rejected.candidate.writer,
            "chosen_score": self.chosen.score,
            "rejected_score": self.rejected.score,
            "margin": self.margin,
            "panels_agree": panels_agree(self.chosen, self.rejected),
            "guarded": self.guarded,
            "fallback_verdicts": sum(  # the offline panels' verdicts, standing in for a model judge
                "fallback" in v.flags for side in (self.chosen, self.rejected) for v in side.verdicts.values()
            ),
        }


def panels_agree(a: ScoredCandidate, b: ScoredCandidate) -> bool | None:
    """Do both panels prefer the same one of two candidates? None when either panel calls it a tie."""
    deltas = [a.panel_score(p) - b.panel_score(p) for p in a.verdicts]
    if any(abs(d) < 1e-9 for d in deltas):
        return None
    return all(d > 0 for d in deltas) or all(d < 0 for d in deltas)


def preference_pairs(judgement: Judgement, min_margin: float = 0.5) -> list[DpoPair]:
    """The pairs this judgement can yield, best first: the human's pick (alone), else the panels' best over their
    worst, then every other two candidates the panels separate by at least `min_margin`, widest margin first.
    Empty for a tie (a human's tie, or best and worst closer than `min_margin`)."""
    best, worst = judgement.proposed_pair()
    if judgement.human is not None:
        if judgement.human.choice == "tie":
            return []
        chosen, rejected = (best, worst) if judgement.human.choice == "A" else (worst, best)
        return [DpoPair(judgement=judgement, chosen=chosen, rejected=rejected, decided_by="human")]
    if best.score - worst.score < min_margin:
        return []
    others = [
        DpoPair(judgement=judgement, chosen=a, rejected=b, decided_by="panels")
        for a, b in itertools.permutations(judgement.ranked(), 2)
        if a.score - b.score >= min_margin and (a, b) != (best, worst)
    ]
    others.sort(key=lambda pair: -pair.margin)  # stable: ties keep the ranking's order
    return [DpoPair(judgement=judgement, chosen=best, rejected=worst, decided_by="panels"), *others]


class Agreement(BaseModel):
    """Over every two candidates of a turn that both panels separate: how often they prefer the same one."""

    compared: int
    agreed: int

    @property
    def rate(self) -> float:
        return round(self.agreed / self.compared, 4) if self.compared else 0.0


def panel_agreement(judgements: Iterable[Judgement]) -> Agreement:
    compared = agreed = 0
    for judgement in judgements:
        for a, b in itertools.combinations(judgement.candidates, 2):
            verdict = panels_agree(a, b)
            if verdict is not None:
                compared += 1
                agreed += int(verdict)
    return Agreement(compared=compared, agreed=agreed)


def in_path_win_rate(judgements: Iterable[Judgement]) -> float | None:
    """Share of (in-Path, off-Path) candidate pairs of a turn where the in-Path one scores higher."""
    wins = total = 0
    for judgement in judgements:
        own = [c for c in judgement.candidates if c.candidate.origin in ("original", "in_path")]
        other = [c for c in judgement.candidates if c.candidate.origin == "off_path"]
        for a, b in itertools.product(own, other):
            total += 1
            wins += int(a.score > b.score)
    return round(wins / total, 4) if total else None


def read_judgements(folder: Path) -> Iterator[Judgement]:
    path = JudgedDir(folder).judgements
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such file; expected a folder written by `amphoreus judge`")
    yield from iter_rows(path, Judgement)


class DpoReport(BaseModel):
    judged: int
    pairs: int
    ties_dropped: int
    dropped_for_balance: int = 0
    switched_for_balance: int = 0
    unbalanced_pairs: int = 0
    below_min_score: int
    guarded: int = Field(default=0, description="judged turns left out: their pairs hold a reply the guard changed")
    duplicates: int
    contaminated: int
    decided_by_human: int
    agreement_rate: float
    pairs_panels_agree: int
    shortcut_probe: ShortcutProbe
    offline_written: int = Field(default=0, description="pairs both of whose replies the offline policy wrote")
    model_written_probe: ShortcutProbe | None = Field(
        default=None, description="the probe on the pairs with a reply the offline policy did not write"
    )
    file: str


def export_dpo(
    folders: list[Path],
    out: Path,
    *,
    min_margin: float = 0.5,
    min_score: float | None = None,
    balance_acts: bool = True,
    exclude_guarded: bool = True,
) -> DpoReport:
    """Every judged turn of the folders as at most one pair in OUT/dpo.jsonl (deduplicated), with a card."""
    judgements = [j for folder in folders for j in read_judgements(folder)]
    return write_dpo(
        judgements,
        out,
        min_margin=min_margin,
        min_score=min_score,
        balance_acts=balance_acts,
        exclude_guarded=exclude_guarded,
    )


def write_dpo(
    judgements: list[Judgement],
    out: Path,
    *,
    min_margin: float = 0.5,
    min_score: float | None = None,
    balance_acts: bool = True,
    exclude_guarded: bool = True,
) -> DpoReport:
    """The judgements as at most one pair each in OUT/dpo.jsonl (deduplicated, balanced by act unless told not
    to, without a reply the discretion guard changed unless told to keep them), with a card."""
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    turns: list[list[dict[str, Any]]] = []  # per judged turn, the rows it can yield, best first
    for judgement in judgements:
        counts["judged"] += 1
        pairs = preference_pairs(judgement, min_margin)
        if not pairs:
            counts["ties"] += 1
            continue
        if exclude_guarded and not (pairs := [p for p in pairs if not p.guarded]):
            counts["guarded"] += 1
            continue
        if min_score is not None and pairs[0].chosen.score < min_score:
            counts["below_min_score"] += 1
            continue
        offered = pairs if balance_acts else pairs[:1]  # the other pairs only serve the balancing
        options = [p.row() for p in offered if min_score is None or p.chosen.score >= min_score]
        if _quotes_an_item(options[0]):
            counts["contaminated"] += 1
            continue
        key = hashlib.sha256(json.dumps([options[0][k] for k in ("prompt", "chosen", "rejected")]).encode()).hexdigest()
        if key in seen:
            counts["duplicates"] += 1
            continue
        seen.add(key)
        turns.append([options[0], *(o for o in options[1:] if not _quotes_an_item(o))])
    if balance_acts:
        human = [options[0]["decided_by"] == "human" for options in turns]
        balanced = balanced_by_act(turns, reply_action, pinned=human)
        rows, left_out, switched, unbalanced = balanced.rows, balanced.left_out, balanced.switched, balanced.unbalanced
    else:
        rows, left_out, switched, unbalanced = [options[0] for options in turns], 0, 0, 0
    out.mkdir(parents=True, exist_ok=True)
    target = JudgedDir(out).pairs
    with open(target, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    agreement = panel_agreement(judgements)
    probe = probe_pairs(rows)
    written = [r for r in rows if not offline_written(r)]  # the pairs on which the probe can fail
    report = DpoReport(
        judged=counts["judged"],
        pairs=len(rows),
        ties_dropped=counts["ties"],
        dropped_for_balance=left_out,
        switched_for_balance=switched,
        unbalanced_pairs=unbalanced,
        below_min_score=counts["below_min_score"],
        guarded=counts["guarded"],
        duplicates=counts["duplicates"],
        contaminated=counts["contaminated"],
        decided_by_human=sum(r["decided_by"] == "human" for r in rows),
        agreement_rate=agreement.rate,
        pairs_panels_agree=sum(bool(r["panels_agree"]) for r in rows),
        shortcut_probe=probe,
        offline_written=len(rows) - len(written),
        model_written_probe=(probe if len(written) == len(rows) else probe_pairs(written)) if written else None,
        file=str(target),
    )
    (out / "README.md").write_text(dpo_card(report, rows, min_margin, min_score, balance_acts), encoding="utf-8")
    return report


def _quotes_an_item(row: dict[str, Any]) -> bool:
    return is_contaminated("\n".join(m["content"] for m in [*row["prompt"], *row["chosen"], *row["rejected"]]))


def reply_action(row: dict[str, Any], side: str) -> str:
    """The action a pair's chosen or rejected reply takes."""
    return str(reply_decision(row[side]).get("action", ""))


def _probe_lines(probe: ShortcutProbe) -> str:
    if probe.heldout_accuracy is None or probe.decision_only_accuracy is None or probe.heldout_range is None:
        return f"Not measured: {probe.note}."
    return (
        f"A bag-of-words logistic regression on the replies alone (no prompt), fit on half of the {probe.pairs} "
        f"pairs, tells chosen from rejected in the other half with accuracy {probe.heldout_accuracy:.1%} (mean "
        f"over {probe.splits} random halvings; the middle 95% of them {probe.heldout_range[0]:.1%}-"
        f"{probe.heldout_range[1]:.1%}); on the decisions alone (action and target) "
        f"{probe.decision_only_accuracy:.1%}. What the other words add: "
        f"{probe.beyond_decision:+.1%} (near 0: no surface word gives a pair away; 50% is chance for both). "
        f"Words it leans on most: {', '.join(probe.telling_words)}. A decision-only figure well above 50% means "
        "the judges prefer some acts whatever the agent's Path: a model can learn that much without the prompt. "
        "On pairs balanced by act, figures somewhat under 50% are the balancing's mark, not a signal: an act that "
        "leans one way in the half the probe is fit on leans the other way in the half it is scored on."
    )


def _writers_line(report: DpoReport) -> str:
    """Whether the probe could have failed: only where chosen and rejected may differ in words."""
    share = (
        f"The offline policy wrote both replies of {report.offline_written} of the {report.pairs} pairs: such a "
        "pair says the same words but the act's, so on them the probe holds by construction and proves nothing."
    )
    probe = report.model_written_probe
    if probe is None:
        return (
            f"{share} No pair has a reply a model (or a recorded non-offline policy) wrote: the probe above is no test."
        )
    return f"{share} On the {probe.pairs} pairs with a reply another writer wrote: {_probe_lines(probe)}"


def dpo_card(
    report: DpoReport, rows: list[dict[str, Any]], min_margin: float, min_score: float | None, balance_acts: bool
) -> str:
    """README.md for the pairs: what is in them, how they were judged, and from which worlds."""
    worlds = Counter(r["world"] or "(none)" for r in rows)
    paths = Counter(r["path"] for r in rows)
    origins = Counter(f"{r['chosen_origin']} over {r['rejected_origin']}" for r in rows)
    lines = [
        "# amphoreus-graph DPO dataset",
        "",
        "Preference pairs in TRL's conversational format: `prompt` (system + user messages), `chosen` and",
        "`rejected` (one assistant message each: a Decision as JSON), judged by the soundness and fidelity",
        "panels (or a human expert where `decided_by` says so).",
        f'Load it: `datasets.load_dataset("json", data_files="{JudgedDir.PAIRS}")`.',
        "",
        f"- pairs: {report.pairs} from {report.judged} judged turns (ties dropped {report.ties_dropped}, "
        f"below min score {report.below_min_score}, a reply changed by the discretion guard {report.guarded}, "
        f"duplicates {report.duplicates}, "
        f"quoting a benchmark item {report.contaminated}, dropped to balance the acts "
        f"{report.dropped_for_balance})",
        f"- min margin {min_margin}, min chosen score {min_score}",
        "- pairs with a reply the discretion guard changed because it said a secret (flags secret_repaired, "
        f"secret_redacted; column `guarded`) are left out unless `--keep-guarded`; kept: "
        f"{sum(bool(r.get('guarded')) for r in rows)}",
        f"- balanced by act: every action is chosen as often as it is rejected, so the act alone tells nothing "
        f"({report.switched_for_balance} turns give another pair the panels separate than their best over worst; "
        f"{report.unbalanced_pairs} pairs left out of balance, where human verdicts, always kept, allow no more; "
        "a probe fit on half of balanced pairs tends to err on the other half, below 50%)"
        if balance_acts
        else "- not balanced by act (`--keep-act-imbalance`): see the decision-only probe below",
        f"- panel agreement over all compared candidate pairs: {report.agreement_rate}",
        f"- pairs both panels agree on: {report.pairs_panels_agree}; decided by a human: {report.decided_by_human}",
        f"- pairs resting on a verdict the offline panels gave for a model judge whose reply could not be used "
        f"(`fallback_verdicts` > 0): {sum(r['fallback_verdicts'] > 0 for r in rows)}",
        "",
        "## Shortcut probe",
        "",
        _probe_lines(report.shortcut_probe),
        "",
        _writers_line(report),
        "",
        "## Pairs per world",
        "",
        *[f"- {w}: {n}" for w, n in sorted(worlds.items())],
        "",
        "## Pairs per Path",
        "",
        *[f"- {p}: {n}" for p, n in sorted(paths.items())],
        "",
        "## Chosen over rejected, by origin",
        "",
        *[f"- {o}: {n}" for o, n in sorted(origins.items())],
        "",
    ]
    return "\n".join(lines)
