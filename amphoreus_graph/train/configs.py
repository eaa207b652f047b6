"""Model sizes and training settings, as data: what `--base tiny|small` builds and what a run was trained with."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from amphoreus_graph.contracts.bounds import Seed

if TYPE_CHECKING:
    from transformers import PreTrainedModel


class ModelSize(BaseModel):
    """A Llama-style decoder (RoPE, RMSNorm, SwiGLU), small enough to train from scratch."""

    layers: int
    hidden: int
    heads: int
    intermediate: int
    vocab_size: int = Field(description="the most BPE tokens the tokenizer may learn")
    context: int = Field(description="longest sequence (tokens); longer prompts lose their beginning")


SIZES: dict[str, ModelSize] = {
    "tiny": ModelSize(layers=2, hidden=128, heads=4, intermediate=512, vocab_size=4096, context=1024),
    "small": ModelSize(layers=6, hidden=384, heads=6, intermediate=1536, vocab_size=8192, context=1024),
}

Loss = Literal["reply", "full"]


def default_lr(base: str) -> float:
    """Fresh small models take a high rate; a pre-trained base must not forget what it knew."""
    return {"tiny": 2e-3, "small": 1e-3}.get(base, 1e-4)


class PretrainConfig(BaseModel):
    """How `amphoreus train pretrain` trains; saved beside the checkpoint so `--resume` continues alike."""

    base: str = Field(default="tiny", description="tiny | small | a local Hugging Face checkpoint directory")
    steps: int = Field(default=300, ge=1, description="optimizer steps in all (a resumed run continues to this)")
    batch_size: int = Field(default=8, ge=1, description="examples per step")
    lr: float = Field(default=2e-3, gt=0, description="peak learning rate (linear warm-up, cosine decay)")
    warmup: int = Field(default=10, ge=0, description="warm-up steps")
    weight_decay: float = 0.01
    seed: Seed = Field(default=0, description="initialisation and batch order")
    loss: Loss = Field(default="reply", description="reply: loss on the assistant reply only; full: on every token")
    max_length: int | None = Field(
        default=None, ge=1, description="truncate examples to this many tokens (default: the model's context)"
    )
    save_every: int = Field(default=50, ge=1, description="checkpoint every N steps (and at the end)")
    keep_checkpoints: int = Field(default=2, ge=1)
    device: str = Field(default="auto", description="auto (CUDA + bf16 when present, else CPU), cpu or cuda")


class DpoSettings(BaseModel):
    """How `amphoreus train dpo` tunes a checkpoint on preference pairs."""

    steps: int = Field(default=40, ge=1, description="optimizer steps")
    beta: float = Field(default=0.1, gt=0, description="DPO β: how far the policy may move from the reference")
    lr: float = Field(default=5e-5, gt=0, description="learning rate")
    batch_size: int = Field(default=4, ge=1, description="pairs per step")
    heldout: float = Field(default=0.2, gt=0, lt=1, description="share of pairs held out to measure the reward margin")
    seed: Seed = Field(default=0, description="the held-out split and training order")
    device: str = Field(default="auto", description="auto (CUDA + bf16 when present), cpu or cuda")


def build_model(size: ModelSize, vocab: int, *, pad_id: int, bos_id: int, eos_id: int) -> PreTrainedModel:
    """A fresh, randomly initialised causal LM of this size."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=size.hidden,
        intermediate_size=size.intermediate,
        num_hidden_layers=size.layers,
        num_attention_heads=size.heads,
        num_key_value_heads=size.heads,
        max_position_embeddings=size.context,
        tie_word_embeddings=True,
        pad_token_id=pad_id,
        bos_token_id=bos_id,
        eos_token_id=eos_id,
    )
    return LlamaForCausalLM(config)
