"""What the experts graph is asked (its Studio form) and `amphoreus judge`'s options: one model, in a module light
enough for the CLI to import at start."""

from __future__ import annotations

from pydantic import BaseModel, Field

from amphoreus_graph.contracts.bounds import Seed


class ExpertsInput(BaseModel):
    """Judge a run's turns and turn them into DPO pairs."""

    run_dir: str = Field(
        default="",
        description="a run written by `amphoreus simulate` or the society graph; default: the newest run in "
        "AMPHOREUS_RUNS_DIR (runs/)",
    )
    out_dir: str = Field(default="", description="where judgements and dpo.jsonl go; default: RUN/judged")
    judge: str = Field(default="offline", description="'offline' or a --model string for a model judge")
    proposer: str = Field(default="offline", description="who proposes alternatives: offline or a --model")
    alternatives: int = Field(default=4, ge=1, le=16, description="alternatives per judged turn")
    max_turns: int = Field(default=24, ge=1, description="judge at most this many turns (seeded sample)")
    seed: Seed = Field(default=0, description="which turns and which alternatives")
    min_margin: float = Field(default=0.5, ge=0, description="drop pairs whose scores differ by less")
    balance_acts: bool = Field(
        default=True, description="keep pairs so that every action is chosen as often as rejected (data/balance.py)"
    )
    exclude_guarded: bool = Field(
        default=True,
        description="drop pairs with a reply the discretion guard changed because it said a secret (flags "
        "secret_repaired, secret_redacted)",
    )
    human: bool = Field(default=False, description="pause for a human expert's verdict on every judged turn")
    base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint for model judges")
