"""Held-out preference figures: log-probabilities of chosen and rejected replies under a model.

Tokenised the way TRL's DPOTrainer does (prompt with the generation prompt, then the reply where prompt and
prompt + reply diverge), so our margins and `trainer.evaluate()`'s `eval_rewards/margins` measure the same.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from amphoreus_graph.train.corpus import Messages
from amphoreus_graph.train.tokenizer import chat_ids

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

PairLogps = tuple[float, float]


def completion_logp(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, prompt: Messages, reply: Messages, device: torch.device
) -> tuple[float, int]:
    """log p(reply | prompt) summed over the reply's tokens, and how many tokens that is."""
    import torch

    prompt_ids = chat_ids(tokenizer, prompt, generation_prompt=True)
    full = chat_ids(tokenizer, prompt + reply)
    start = 0
    while start < min(len(prompt_ids), len(full)) and prompt_ids[start] == full[start]:
        start += 1
    context = int(getattr(model.config, "max_position_embeddings", 0) or len(full))
    cut = max(0, len(full) - context)
    ids = torch.tensor([full[cut:]], device=device)
    start = max(1, start - cut)
    logits = model(input_ids=ids).logits[0, :-1].float()
    logps = torch.log_softmax(logits, dim=-1).gather(1, ids[0, 1:, None])[:, 0][start - 1 :]
    return float(logps.sum()), int(logps.numel())


def pair_logps(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, pairs: list[dict[str, Messages]], device: torch.device
) -> list[PairLogps]:
    """(log p(chosen), log p(rejected)) per pair, each the sum over the reply's tokens."""
    import torch

    was_training = model.training
    model.eval()
    with torch.inference_mode():
        found = [
            (
                completion_logp(model, tokenizer, p["prompt"], p["chosen"], device)[0],
                completion_logp(model, tokenizer, p["prompt"], p["rejected"], device)[0],
            )
            for p in pairs
        ]
    model.train(was_training)
    return found


class PreferenceFigures(BaseModel):
    """How strongly a model prefers the chosen replies of held-out pairs."""

    pairs: int
    reward_margin: float = Field(description="mean β·[(log π − log π_ref)(chosen) − (log π − log π_ref)(rejected)]")
    reward_accuracy: float = Field(description="share of pairs whose chosen reward beats the rejected one")
    logp_margin: float = Field(description="mean log π(chosen) − log π(rejected): the raw preference")
    logp_accuracy: float = Field(description="share of pairs where log π(chosen) > log π(rejected)")


def preference_figures(policy: list[PairLogps], reference: list[PairLogps], beta: float) -> PreferenceFigures:
    """DPO's implicit reward compares a policy to its reference; before training the two are the same model,
    so the reward margin starts at 0 and the log-prob margin says what the reference already prefers."""
    rewards = [beta * ((pc - rc) - (pr - rr)) for (pc, pr), (rc, rr) in zip(policy, reference, strict=True)]
    raw = [pc - pr for pc, pr in policy]
    n = max(1, len(policy))
    return PreferenceFigures(
        pairs=len(policy),
        reward_margin=round(sum(rewards) / n, 5),
        reward_accuracy=round(sum(r > 0 for r in rewards) / n, 4),
        logp_margin=round(sum(raw) / n, 4),
        logp_accuracy=round(sum(r > 0 for r in raw) / n, 4),
    )
