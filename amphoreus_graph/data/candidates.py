"""Re-pose a recorded turn to other deciders, so judges have alternatives to rank against the original.

Offline, alternatives come from the agent's own Path under other seeds (in-Path) and from Paths its own
opposes (off-Path: the same situation, decided by the opposite values but said in the agent's own voice, so a
pair differs in what was done, not in words that name a Path), drawn from the Path catalog of the turn's own
scenario. With a model, they are the model's own samples at a raised temperature. Every candidate passes the discretion
guard the society's turns pass (policy/discretion.py): none that gives a secret away is judged, let alone chosen.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from amphoreus_graph.catalogs.paths import PathCatalog
from amphoreus_graph.catalogs.scenario import catalog_of_turn
from amphoreus_graph.contracts.rng import stable_rng
from amphoreus_graph.contracts.turn import Decision, Policy, TurnContext
from amphoreus_graph.policy.discretion import SECRET_REDACTED, discreet, redact, says_a_secret
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.society.samples import Sample

Origin = Literal["original", "in_path", "off_path", "sampled"]


class Candidate(BaseModel):
    """One possible Decision for a turn, and where it came from (`path` = the Path that decided it)."""

    id: str
    decision: Decision
    origin: Origin
    path: str
    flags: list[str] = []
    writer: str = Field(default="", description="who wrote its words: the recorded model, offline, or a proposer")


def original(sample: Sample) -> Candidate:
    return Candidate(
        id=f"{sample.id}#original",
        decision=sample.decision,
        origin="original",
        path=sample.path,
        flags=sample.flags,
        writer=sample.decided_by or sample.model,
    )


def discreet_candidate(candidate: Candidate, turn: TurnContext) -> Candidate:
    """The candidate as the guard lets it be said: unchanged, or redacted and flagged if it says a secret of the
    turn (an original recorded before the guard, an offline alternative)."""
    if not says_a_secret(turn, candidate.decision):
        return candidate
    flags = [*candidate.flags, SECRET_REDACTED]
    return candidate.model_copy(update={"decision": redact(turn, candidate.decision), "flags": flags})


def off_path_choices(catalog: PathCatalog, path: str, seed: int, turn_id: str, k: int) -> list[str]:
    """Up to k other Paths of the catalog to decide as: the Path's declared opposites first, then seeded others."""
    others = [p for p in catalog.names() if p != path and p not in catalog[path].opposed]
    stable_rng(seed, turn_id, "off-path").shuffle(others)
    return [*catalog[path].opposed, *others][:k]


def offline_alternatives(sample: Sample, turn: TurnContext, k: int, seed: int) -> list[Candidate]:
    """k alternatives: ceil(k/2) in-Path under other seeds (hotter noise), the rest decided by other Paths."""
    in_path = (k + 1) // 2
    found: list[Candidate] = []
    for i in range(in_path):
        policy = OfflinePathPolicy(temperature=0.8, salt=f"expert-{seed}-{i}")
        decision = policy.decide(turn)
        found.append(
            Candidate(id=f"{sample.id}#in{i}", decision=decision, origin="in_path", path=turn.path, writer=policy.name)
        )
    others = off_path_choices(catalog_of_turn(turn), turn.path, seed, sample.id, k - in_path)
    for i, other in enumerate(others):
        decision = OfflinePathPolicy(salt=f"expert-{seed}-off{i}").decide(turn, values=other)
        found.append(
            Candidate(id=f"{sample.id}#off{i}", decision=decision, origin="off_path", path=other, writer="offline")
        )
    return found


async def sampled_alternatives(sample: Sample, turn: TurnContext, k: int, policy: Policy) -> list[Candidate]:
    """k alternatives from a (temperature-raised) model policy; a fallback decision is kept but flagged, and one that
    says a secret is asked again or redacted as in a society (flagged too)."""
    found = []
    for i in range(k):
        result = await discreet(policy, turn, await policy.adecide(turn))
        found.append(
            Candidate(
                id=f"{sample.id}#s{i}",
                decision=result.decision,
                origin="sampled",
                path=turn.path,
                flags=result.flags,
                writer=result.decided_by or policy.name,
            )
        )
    return found
