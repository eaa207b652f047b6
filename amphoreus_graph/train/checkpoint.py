"""Checkpoints a pre-training run can resume from: `OUT/checkpoint-STEP/` holds the model and tokenizer
(`save_pretrained`) plus the optimizer, schedule and RNG state; the newest few are kept."""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.train.data_only import load_refused
from amphoreus_graph.train.hf_model import save_model

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

STATE_FILE = "training_state.pt"
MODEL_CONFIG = "config.json"  # what `save_pretrained` writes beside a model's weights (Hugging Face's name)
PREFIX = "checkpoint-"


def checkpoints(out: Path) -> list[Path]:
    """Complete checkpoints (their state file written last), oldest first."""
    found = [p for p in out.glob(f"{PREFIX}*") if p.is_dir() and (p / STATE_FILE).is_file()]
    return sorted(found, key=lambda p: int(p.name.removeprefix(PREFIX)))


def save_checkpoint(
    out: Path,
    step: int,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    optimizer: torch.optim.Optimizer,
    scheduler: Any,
    keep: int,
) -> Path:
    import torch

    folder = out / f"{PREFIX}{step}"
    tmp = out / f".{PREFIX}{step}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    save_model(tmp, model, tokenizer)
    state = {
        "step": step,
        "optimizer": optimizer.state_dict(),
        "scheduler": scheduler.state_dict(),
        "torch_rng": torch.get_rng_state(),
    }
    torch.save(state, tmp / STATE_FILE)
    shutil.rmtree(folder, ignore_errors=True)
    tmp.rename(folder)  # a kill mid-save leaves only the hidden temp folder, never a half checkpoint
    for old in checkpoints(out)[:-keep]:
        shutil.rmtree(old, ignore_errors=True)
    return folder


def load_state(folder: Path) -> dict[str, Any]:
    """The training state saved with a checkpoint, read as data only (`weights_only`)."""
    import torch

    file = folder / STATE_FILE
    expected = "expected a training state as `amphoreus train` saves it"
    try:
        state = torch.load(file, weights_only=True, map_location="cpu")
    except (pickle.UnpicklingError, RuntimeError, EOFError, OSError) as exc:
        raise load_refused(file, exc, expected) from None
    if not isinstance(state, dict) or not {"step", "optimizer", "scheduler", "torch_rng"} <= set(state):
        raise AmphoreusError(f"{file}: not a training state; {expected}")
    return state
