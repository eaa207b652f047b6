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
from amphoreus_graph.data.candidates import Candidate
from amphoreus_graph.data.judges.base import Panel, Verdict
from amphoreus_graph.data.shortcuts import ShortcutProbe, probe_pairs
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.policy.prompt import decision_json
from amphoreus_graph.society.samples import iter_rows

JUDGEMENTS_FILE = "judgements.jsonl"
DPO_FILE = "dpo.jsonl"


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
            "chosen_score": self.chosen.score,
            "rejected_score": self.rejected.score,
            "margin": self.margin,
            "panels_agree": panels_agree(self.chosen, self.rejected),
        }


def panels_agree(a: ScoredCandidate, b: ScoredCandidate) -> bool | None:
    """Do both panels prefer the same one of two candidates? None when either panel calls it a tie."""
    deltas = [a.panel_score(p) - b.panel_score(p) for p in a.verdicts]
    if any(abs(d) < 1e-9 for d in deltas):
        return None
    return all(d > 0 for d in deltas) or all(d < 0 for d in deltas)


def preference_pair(judgement: Judgement, min_margin: float = 0.5) -> DpoPair | None:
    """The pair this judgement yields, or None for a tie (a human's tie, or a margin under `min_margin`)."""
    best, worst = judgement.proposed_pair()
    if judgement.human is not None:
        if judgement.human.choice == "tie":
            return None
        chosen, rejected = (best, worst) if judgement.human.choice == "A" else (worst, best)
        return DpoPair(judgement=judgement, chosen=chosen, rejected=rejected, decided_by="human")
    if best.score - worst.score < min_margin:
        return None
    return DpoPair(judgement=judgement, chosen=best, rejected=worst, decided_by="panels")


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
    path = folder / JUDGEMENTS_FILE
    if not path.is_file():
        raise AmphoreusError(f"{path}: no such file; expected a folder written by `amphoreus judge`")
    yield from iter_rows(path, Judgement)


class DpoReport(BaseModel):
    judged: int
    pairs: int
    ties_dropped: int
    below_min_score: int
    duplicates: int
    contaminated: int
    decided_by_human: int
    agreement_rate: float
    pairs_panels_agree: int
    shortcut_probe: ShortcutProbe
    file: str


def export_dpo(folders: list[Path], out: Path, *, min_margin: float = 0.5, min_score: float | None = None) -> DpoReport:
    """Every judged turn of the folders as at most one pair in OUT/dpo.jsonl (deduplicated), with a card."""
    judgements = [j for folder in folders for j in read_judgements(folder)]
    return write_dpo(judgements, out, min_margin=min_margin, min_score=min_score)


def write_dpo(
    judgements: list[Judgement], out: Path, *, min_margin: float = 0.5, min_score: float | None = None
) -> DpoReport:
    """The judgements as at most one pair each in OUT/dpo.jsonl (deduplicated), with a card."""
    counts: Counter[str] = Counter()
    seen: set[str] = set()
    rows: list[dict[str, Any]] = []
    for judgement in judgements:
        counts["judged"] += 1
        pair = preference_pair(judgement, min_margin)
        if pair is None:
            counts["ties"] += 1
            continue
        if min_score is not None and pair.chosen.score < min_score:
            counts["below_min_score"] += 1
            continue
        row = pair.row()
        if is_contaminated("\n".join(m["content"] for m in [*row["prompt"], *row["chosen"], *row["rejected"]])):
            counts["contaminated"] += 1
            continue
        key = hashlib.sha256(json.dumps([row["prompt"], row["chosen"], row["rejected"]]).encode()).hexdigest()
        if key in seen:
            counts["duplicates"] += 1
            continue
        seen.add(key)
        rows.append(row)
    out.mkdir(parents=True, exist_ok=True)
    target = out / DPO_FILE
    with open(target, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    agreement = panel_agreement(judgements)
    report = DpoReport(
        judged=counts["judged"],
        pairs=len(rows),
        ties_dropped=counts["ties"],
        below_min_score=counts["below_min_score"],
        duplicates=counts["duplicates"],
        contaminated=counts["contaminated"],
        decided_by_human=sum(r["decided_by"] == "human" for r in rows),
        agreement_rate=agreement.rate,
        pairs_panels_agree=sum(bool(r["panels_agree"]) for r in rows),
        shortcut_probe=probe_pairs(rows),
        file=str(target),
    )
    (out / "README.md").write_text(dpo_card(report, rows, min_margin, min_score), encoding="utf-8")
    return report


def _probe_lines(probe: ShortcutProbe) -> str:
    if probe.heldout_accuracy is None or probe.decision_only_accuracy is None:
        return f"Not measured: {probe.note}."
    return (
        f"A bag-of-words logistic regression on the replies alone (no prompt), fit on half of the {probe.pairs} "
        f"pairs, tells chosen from rejected in the other half with accuracy {probe.heldout_accuracy:.1%}; on the "
        f"decisions alone (action and target) {probe.decision_only_accuracy:.1%}. What the other words add: "
        f"{probe.beyond_decision:+.1%} (near 0: no surface word gives a pair away; 50% is chance for both). "
        f"Words it leans on most: {', '.join(probe.telling_words)}. A decision-only figure well above 50% means "
        "the judges prefer some acts whatever the agent's Path: a model can learn that much without the prompt."
    )


def dpo_card(report: DpoReport, rows: list[dict[str, Any]], min_margin: float, min_score: float | None) -> str:
    """README.md for the pairs: what is in them, how they were judged, and from which worlds."""
    worlds = Counter(r["world"] or "(none)" for r in rows)
    paths = Counter(r["path"] for r in rows)
    origins = Counter(f"{r['chosen_origin']} over {r['rejected_origin']}" for r in rows)
    lines = [
        "# amphoreus-graph DPO dataset",
        "",
        "Preference pairs in TRL's conversational format: `prompt` (system + user messages), `chosen` and",
        "`rejected` (one assistant message each: a Decision as JSON), judged by the Genius Society and",
        "The Nameless (or a human expert where `decided_by` says so).",
        f'Load it: `datasets.load_dataset("json", data_files="{DPO_FILE}")`.',
        "",
        f"- pairs: {report.pairs} from {report.judged} judged turns (ties dropped {report.ties_dropped}, "
        f"below min score {report.below_min_score}, duplicates {report.duplicates}, "
        f"quoting a benchmark item {report.contaminated})",
        f"- min margin {min_margin}, min chosen score {min_score}",
        f"- panel agreement over all compared candidate pairs: {report.agreement_rate}",
        f"- pairs both panels agree on: {report.pairs_panels_agree}; decided by a human: {report.decided_by_human}",
        "",
        "## Shortcut probe",
        "",
        _probe_lines(report.shortcut_probe),
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
