"""A causal LM and its tokenizer as one folder (Hugging Face's `save_pretrained` layout), which pre-training
resumes from, DPO starts from and both finish by writing; and the context a model takes."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from amphoreus_graph.train.data_only import load_refused

if TYPE_CHECKING:
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

FALLBACK_CONTEXT = 1024  # for a model config that names no maximum position


def load_model(folder: Path) -> tuple[Any, Any]:
    """The model and tokenizer saved in `folder` (typed `Any`: the Auto classes pick the concrete class from the
    folder's config only at run time)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    try:  # as data: no code the folder names (trust_remote_code), weights as tensors only (transformers' default)
        tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=False)
        model = AutoModelForCausalLM.from_pretrained(folder, trust_remote_code=False)
    except Exception as exc:  # a damaged or foreign folder, whichever library part finds it: one line
        raise load_refused(folder, exc, "expected a folder written by `amphoreus train`") from None
    return model, tokenizer


def save_model(folder: Path, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """Model and tokenizer side by side, so `load_model` and `pes:FOLDER` find both in one place."""
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def context_length(model: PreTrainedModel) -> int:
    """The longest sequence the model's position embeddings cover: what an example is truncated to."""
    return int(getattr(model.config, "max_position_embeddings", 0) or FALLBACK_CONTEXT)
