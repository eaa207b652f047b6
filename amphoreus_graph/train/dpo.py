"""DPO of a PES checkpoint on the experts' preference pairs, with TRL's DPOTrainer.

The reference is what TRL makes of `ref_model=None`: a second copy of the starting checkpoint, loaded from its
folder and frozen. A seeded share of the pairs is held out; on them we measure the chosen-over-rejected
reward margin and accuracy before and after training (before, policy = reference, so the reward margin is 0
by definition and the log-prob margin shows what the model already preferred), and keep TRL's own
`trainer.evaluate()` figures beside ours as a cross-check.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.train.checkpoint import MODEL_CONFIG
from amphoreus_graph.train.configs import DpoSettings
from amphoreus_graph.train.corpus import Messages, read_dpo_pairs, split_heldout
from amphoreus_graph.train.device import pick_device
from amphoreus_graph.train.extras import require_train_extra
from amphoreus_graph.train.hf_model import context_length, load_model, save_model
from amphoreus_graph.train.logprobs import PreferenceFigures, pair_logps, preference_figures
from amphoreus_graph.train.quiet import quiet_libraries

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase, TrainerCallback
    from trl import DPOConfig, DPOTrainer

METRICS_FILE = "metrics.json"
SCRATCH = ".trainer"  # TRL's output_dir: it insists on one, and we keep nothing of it


class DpoMetrics(BaseModel):
    out: str
    model: str
    device: str
    train_pairs: int
    heldout_pairs: int
    settings: DpoSettings
    before: PreferenceFigures
    after: PreferenceFigures
    trl_eval: dict[str, float] = Field(description="trainer.evaluate() on the held-out pairs after training")
    losses: list[float]
    wall_s: float


def _check_model(model_dir: Path) -> None:
    if not (model_dir / MODEL_CONFIG).is_file():
        raise AmphoreusError(f"--model {model_dir}: no checkpoint there; expected a folder written by `train pretrain`")


def equal_batches(pairs: int, most: int) -> int:
    """The largest batch size up to `most` that splits `pairs` into equal batches: TRL's evaluation averages its
    batches' means, which equals the mean over pairs (our held-out figure) only when no batch is short."""
    return max(size for size in range(1, max(1, most) + 1) if pairs % size == 0) if pairs else most


def train_dpo(
    pairs_dirs: Path | list[Path],
    model_dir: Path,
    out: Path,
    settings: DpoSettings | None = None,
    *,
    on_step: Callable[[int, float], None] | None = None,
) -> DpoMetrics:
    """Train `model_dir` on the pairs of `pairs_dirs` (dpo.jsonl) and save the result (model, tokenizer,
    metrics.json) to `out`; `on_step(step, loss)` hears every optimizer step."""
    settings = settings or DpoSettings()
    pairs = read_dpo_pairs(pairs_dirs if isinstance(pairs_dirs, list) else [pairs_dirs])
    _check_model(model_dir)
    if out.resolve() == model_dir.resolve():
        raise AmphoreusError(f"--out {out}: the same folder as --model; expected a new folder")
    if (out / MODEL_CONFIG).exists():
        raise AmphoreusError(f"{out}: already holds a checkpoint; expected a new --out")
    require_train_extra()
    with quiet_libraries():
        return _train(pairs, model_dir, out, settings, on_step)


def _train(
    pairs: list[dict[str, Messages]],
    model_dir: Path,
    out: Path,
    settings: DpoSettings,
    on_step: Callable[[int, float], None] | None,
) -> DpoMetrics:
    """The held-out pairs are scored by the starting model (the reference) before TRL trains on the rest and by
    the trained one after, so the metrics say what DPO changed; TRL's own evaluation stands beside them."""
    train, heldout = split_heldout(pairs, settings.heldout, settings.seed)
    device = pick_device(settings.device)
    model, tokenizer = _starting_model(model_dir)
    model = model.to(device)
    started = time.perf_counter()
    reference = pair_logps(model, tokenizer, heldout, device)
    args = _dpo_config(settings, out / SCRATCH, len(heldout), model, device)
    trainer = _trainer(model, tokenizer, train, heldout, args)
    if on_step is not None:
        trainer.add_callback(_progress(on_step))
    trainer.train()
    trl_eval = {k: float(v) for k, v in trainer.evaluate().items() if isinstance(v, int | float)}
    trained: Any = trainer.model
    after = preference_figures(pair_logps(trained, tokenizer, heldout, device), reference, settings.beta)
    _save(out, trained, tokenizer)
    history: list[dict[str, Any]] = trainer.state.log_history
    metrics = DpoMetrics(
        out=str(out),
        model=str(model_dir),
        device=str(device),
        train_pairs=len(train),
        heldout_pairs=len(heldout),
        settings=settings,
        before=preference_figures(reference, reference, settings.beta),
        after=after,
        trl_eval=trl_eval,
        losses=[round(float(h["loss"]), 5) for h in history if "loss" in h],
        wall_s=round(time.perf_counter() - started, 2),
    )
    (out / METRICS_FILE).write_text(json.dumps(metrics.model_dump(), indent=1) + "\n")
    return metrics


def _starting_model(model_dir: Path) -> tuple[Any, Any]:
    """The checkpoint to train, refused when its tokenizer cannot render the pairs' chat messages."""
    model, tokenizer = load_model(model_dir)
    if not tokenizer.chat_template:
        raise AmphoreusError(f"--model {model_dir}: the tokenizer has no chat template; expected a PES checkpoint")
    return model, tokenizer


def _dpo_config(
    settings: DpoSettings, scratch: Path, heldout: int, model: PreTrainedModel, device: torch.device
) -> DPOConfig:
    """TRL's settings from ours: nothing saved, evaluated or reported on its own (we measure and save), every
    loss logged (for `on_step`), and bf16 on CUDA."""
    from trl import DPOConfig

    return DPOConfig(
        output_dir=str(scratch),
        max_steps=settings.steps,
        per_device_train_batch_size=settings.batch_size,
        per_device_eval_batch_size=equal_batches(heldout, settings.batch_size),
        learning_rate=settings.lr,
        beta=settings.beta,
        seed=settings.seed,
        max_length=context_length(model),
        logging_steps=1,
        save_strategy="no",
        eval_strategy="no",
        report_to=[],
        disable_tqdm=True,
        use_cpu=device.type == "cpu",
        bf16=device.type == "cuda",
        dataloader_num_workers=0,
    )


def _trainer(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    train: list[dict[str, Messages]],
    heldout: list[dict[str, Messages]],
    args: DPOConfig,
) -> DPOTrainer:
    """TRL's DPOTrainer with the reference it makes of `ref_model=None` (a frozen copy of the starting
    checkpoint), and without its printed logs: we print our own progress."""
    import datasets
    from transformers import PrinterCallback
    from trl import DPOTrainer

    trainer = DPOTrainer(
        model=model,
        ref_model=None,
        args=args,
        train_dataset=datasets.Dataset.from_list(train),
        eval_dataset=datasets.Dataset.from_list(heldout),
        processing_class=tokenizer,
    )
    trainer.remove_callback(PrinterCallback)
    return trainer


def _progress(on_step: Callable[[int, float], None]) -> TrainerCallback:
    """A callback that hands each logged training loss to `on_step` (TRL logs every step, see `_dpo_config`)."""
    from transformers import TrainerCallback

    class _Progress(TrainerCallback):
        def on_log(self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **_: Any) -> None:
            if logs and "loss" in logs:
                on_step(int(state.global_step), float(logs["loss"]))

    return _Progress()


def _save(out: Path, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """The trained model where `pes:OUT` finds it; TRL's scratch folder goes, it holds nothing we keep."""
    out.mkdir(parents=True, exist_ok=True)
    save_model(out, model, tokenizer)
    shutil.rmtree(out / SCRATCH, ignore_errors=True)
