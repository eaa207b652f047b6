"""Pre-train the PES model: a small causal LM on the society's chat examples, from scratch or from a base.

From scratch (`tiny`, `small`) the tokenizer is a byte-level BPE fitted to the corpus. Each example is rendered
with the chat template; by default the loss covers the assistant reply only (the Decision JSON the policy must
write; the prompt is context), `loss="full"` makes it a plain language model of the whole text. Batches come
from a seeded permutation per epoch, so a resumed run sees exactly the batches an uninterrupted one would.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.train.checkpoint import MODEL_CONFIG, checkpoints, load_state, save_checkpoint
from amphoreus_graph.train.configs import SIZES, PretrainConfig, build_model
from amphoreus_graph.train.corpus import Messages
from amphoreus_graph.train.device import autocast, pick_device
from amphoreus_graph.train.extras import require_train_extra
from amphoreus_graph.train.hf_model import context_length, load_model, save_model
from amphoreus_graph.train.quiet import quiet_libraries
from amphoreus_graph.train.tokenizer import adopt_chat_template, corpus_texts, encode_example, train_tokenizer

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedModel, PreTrainedTokenizerBase

LOG_FILE = "train_log.json"
CONFIG_FILE = "pretrain_config.json"


class StepLog(BaseModel):
    step: int
    of: int = Field(description="the run's total steps")
    loss: float
    lr: float
    tokens: int = Field(description="tokens in the batch (padding excluded)")
    tokens_per_s: float


class PretrainMetrics(BaseModel):
    """What a pre-training run did; `train_log.json` holds these plus every step."""

    out: str
    base: str
    device: str
    parameters: int
    vocab: int
    examples: int
    steps: int
    resumed_from: int | None = None
    loss_first: float = Field(description="mean loss of the first ten logged steps")
    loss_last: float = Field(description="mean loss of the last ten logged steps")
    tokens_per_s: float = Field(description="training tokens per second over this invocation")
    wall_s: float


def _fresh(config: PretrainConfig, rows: list[Messages]) -> tuple[Any, Any]:
    """A model and tokenizer to start from: a new tiny/small one, or a local base checkpoint."""
    tokenizer: Any
    model: Any
    if config.base in SIZES:
        size = SIZES[config.base]
        tokenizer = train_tokenizer(corpus_texts(rows), size.vocab_size)
        model = build_model(
            size,
            len(tokenizer),
            pad_id=int(tokenizer.pad_token_id),
            bos_id=int(tokenizer.bos_token_id),
            eos_id=int(tokenizer.eos_token_id),
        )
        return model, tokenizer
    base = Path(config.base)
    if not (base / MODEL_CONFIG).is_file():
        raise AmphoreusError(
            f"--base {config.base!r}: expected tiny, small or a local Hugging Face checkpoint directory (config.json)"
        )
    model, tokenizer = load_model(base)
    if adopt_chat_template(tokenizer):
        model.resize_token_embeddings(len(tokenizer))
    model.config.pad_token_id = tokenizer.pad_token_id
    return model, tokenizer


def _context(model: PreTrainedModel, config: PretrainConfig) -> int:
    """The model's context, or `max_length` when that is shorter."""
    limit = context_length(model)
    return min(limit, config.max_length or limit)


def _encode(
    tokenizer: PreTrainedTokenizerBase, rows: list[Messages], config: PretrainConfig, context: int
) -> list[tuple[list[int], int]]:
    """(ids, loss start) per example; a long example keeps its end, where the options and the reply are."""
    encoded = []
    for messages in rows:
        ids, start = encode_example(tokenizer, messages, reply_only=config.loss == "reply")
        cut = max(0, len(ids) - context)
        encoded.append((ids[cut:], max(0, start - cut)))
    return encoded


def batch_indices(n: int, step: int, batch_size: int, seed: int) -> list[int]:
    """Rows of (1-based) step `step`: consecutive slices of one seeded permutation per epoch (each epoch's
    permutation is drawn once and kept, so a step costs its batch, not a shuffle per example)."""
    out = []
    for position in range((step - 1) * batch_size, step * batch_size):
        epoch, offset = divmod(position, n)
        out.append(_epoch_order(n, seed, epoch)[offset])
    return out


@lru_cache(maxsize=2)  # a step needs the current epoch and at most the next (batch ≤ rows)
def _epoch_order(n: int, seed: int, epoch: int) -> tuple[int, ...]:
    order = list(range(n))
    random.Random(f"pretrain|{seed}|{epoch}").shuffle(order)
    return tuple(order)


def _collate(
    examples: list[tuple[list[int], int]], pad_id: int, device: torch.device
) -> tuple[dict[str, torch.Tensor], int]:
    import torch

    width = max(len(ids) for ids, _ in examples)
    input_ids = torch.full((len(examples), width), pad_id, dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (ids, start) in enumerate(examples):
        row = torch.tensor(ids, dtype=torch.long)
        input_ids[i, : len(ids)] = row
        mask[i, : len(ids)] = 1
        labels[i, start : len(ids)] = row[start:]
    batch = {"input_ids": input_ids, "attention_mask": mask, "labels": labels}
    return {k: v.to(device) for k, v in batch.items()}, int(mask.sum())


def _schedule(config: PretrainConfig) -> Callable[[int], float]:
    """Linear warm-up, then cosine decay to a tenth of the peak."""

    def factor(step: int) -> float:
        if step < config.warmup:
            return (step + 1) / (config.warmup + 1)
        progress = (step - config.warmup) / max(1, config.steps - config.warmup)
        return 0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))

    return factor


def _read_log(out: Path, up_to: int) -> list[dict[str, Any]]:
    file = out / LOG_FILE
    if not file.is_file():
        return []
    return [s for s in json.loads(file.read_text()).get("steps", []) if s["step"] <= up_to]


def pretrain(
    rows: list[Messages],
    out: Path,
    config: PretrainConfig | None = None,
    *,
    resume: bool = False,
    on_step: Callable[[StepLog], None] | None = None,
) -> PretrainMetrics:
    """Train (or with `resume`, continue from OUT's newest checkpoint) up to `config.steps`; OUT gets the model
    and tokenizer (`save_pretrained`), checkpoints, `train_log.json` and the config."""
    require_train_extra("torch", "transformers", "tokenizers")
    with quiet_libraries():
        return _pretrain(rows, out, config, resume, on_step)


def _pretrain(
    rows: list[Messages],
    out: Path,
    config: PretrainConfig | None,
    resume: bool,
    on_step: Callable[[StepLog], None] | None,
) -> PretrainMetrics:
    """The run in the order that keeps OUT consistent: nothing written before the folder is checked, and the
    final model saved before the log that reports it."""
    config = _settled_config(out, config, resume)
    found = _checked_checkpoints(rows, out, resume)
    run = _open_run(rows, out, config, found[-1] if resume else None)
    started = time.perf_counter()
    tokens_seen = _run_steps(run, on_step)
    wall = time.perf_counter() - started
    save_model(out, run.model, run.tokenizer)
    metrics = _metrics(run, len(rows), run.start_step if resume else None, tokens_seen, wall)
    _write_log(out, config, run.log, metrics)
    return metrics


def _settled_config(out: Path, config: PretrainConfig | None, resume: bool) -> PretrainConfig:
    """A resumed run keeps the settings it started with, so it sees the batches an uninterrupted one would;
    only the steps (to train further) and the device (to move machines) may change."""
    if resume and (out / CONFIG_FILE).is_file():
        saved = PretrainConfig.model_validate_json((out / CONFIG_FILE).read_text())
        given = config.model_fields_set & {"steps", "device"} if config else set()
        return saved.model_copy(update={k: getattr(config, k) for k in given})
    return config or PretrainConfig()


def _checked_checkpoints(rows: list[Messages], out: Path, resume: bool) -> list[Path]:
    """OUT's checkpoints, oldest first, once it is clear the run may go ahead: refused before any model loads
    when there is nothing to train on, nothing to resume, or a model already there that a new run would
    overwrite."""
    if not rows:
        raise AmphoreusError("no training rows")
    found = checkpoints(out) if out.is_dir() else []
    if resume and not found:
        raise AmphoreusError(f"{out}: no checkpoint to resume from; expected a folder written by `train pretrain`")
    if not resume and (found or (out / MODEL_CONFIG).exists()):
        raise AmphoreusError(f"{out}: already holds a checkpoint; expected a new --out, or --resume")
    return found


@dataclass
class _Run:
    """What every step works on, set up once: the model on its device, its optimizer and schedule, the encoded
    examples, and the step log so far (a resumed run's log holds the steps before its checkpoint)."""

    config: PretrainConfig
    out: Path
    device: torch.device
    model: Any
    tokenizer: Any
    optimizer: torch.optim.Optimizer
    scheduler: torch.optim.lr_scheduler.LambdaLR
    encoded: list[tuple[list[int], int]]
    pad_id: int
    start_step: int
    log: list[dict[str, Any]]


def _open_run(rows: list[Messages], out: Path, config: PretrainConfig, last: Path | None) -> _Run:
    """Everything the step loop needs, from the checkpoint `last` or from scratch; OUT gets the config before
    the first step, so that a `--resume` from any of its checkpoints trains on alike."""
    import torch

    device = pick_device(config.device)
    torch.manual_seed(config.seed)  # a fresh model's initial weights follow the seed
    state: dict[str, Any] | None = None
    if last is None:
        model, tokenizer = _fresh(config, rows)
    else:
        state = _resumable_state(last, out, config)
        model, tokenizer = load_model(last)
    out.mkdir(parents=True, exist_ok=True)
    (out / CONFIG_FILE).write_text(config.model_dump_json(indent=2) + "\n")
    model.to(device)
    model.train()
    encoded = _encode(tokenizer, rows, config, _context(model, config))
    optimizer, scheduler = _optimizer(model, config, device, state)
    start_step = int(state["step"]) if state else 0
    return _Run(
        config=config,
        out=out,
        device=device,
        model=model,
        tokenizer=tokenizer,
        optimizer=optimizer,
        scheduler=scheduler,
        encoded=encoded,
        pad_id=int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id),
        start_step=start_step,
        log=_read_log(out, start_step),
    )


def _resumable_state(last: Path, out: Path, config: PretrainConfig) -> dict[str, Any]:
    """The training state saved with checkpoint `last`, refused when the run already has the steps asked for."""
    state = load_state(last)
    if config.steps <= int(state["step"]):
        raise AmphoreusError(f"{out}: already trained to step {int(state['step'])}; expected --steps above it")
    return state


def _optimizer(
    model: PreTrainedModel, config: PretrainConfig, device: torch.device, state: dict[str, Any] | None
) -> tuple[torch.optim.Optimizer, torch.optim.lr_scheduler.LambdaLR]:
    """AdamW under the warm-up/cosine schedule; from a checkpoint's state (with its RNG) a resumed run goes on
    exactly where the uninterrupted one would be."""
    import torch

    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay, fused=device.type == "cuda"
    )
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, _schedule(config))
    if state is not None:
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        torch.set_rng_state(state["torch_rng"])
    return optimizer, scheduler


def _run_steps(run: _Run, on_step: Callable[[StepLog], None] | None) -> int:
    """Step from where the run stands to `config.steps`, logging every step and checkpointing every
    `save_every` and at the end (with the log, so a resume finds both); the tokens trained on."""
    config = run.config
    tokens_seen = 0
    for step in range(run.start_step + 1, config.steps + 1):
        entry = _step(run, step)
        tokens_seen += entry.tokens
        run.log.append(entry.model_dump())
        if on_step:
            on_step(entry)
        if step % config.save_every == 0 or step == config.steps:
            save_checkpoint(
                run.out, step, run.model, run.tokenizer, run.optimizer, run.scheduler, config.keep_checkpoints
            )
            _write_log(run.out, config, run.log, None)
    return tokens_seen


def _step(run: _Run, step: int) -> StepLog:
    """One optimizer step on step `step`'s batch, timed up to the finished update (CUDA runs ahead otherwise)."""
    import torch

    tick = time.perf_counter()
    indices = batch_indices(len(run.encoded), step, run.config.batch_size, run.config.seed)
    batch, tokens = _collate([run.encoded[i] for i in indices], run.pad_id, run.device)
    with autocast(run.device):
        loss = run.model(**batch).loss
    loss.backward()
    torch.nn.utils.clip_grad_norm_(run.model.parameters(), 1.0)
    run.optimizer.step()
    run.scheduler.step()
    run.optimizer.zero_grad(set_to_none=True)
    value = float(loss.detach())
    if run.device.type == "cuda":
        torch.cuda.synchronize()
    return StepLog(
        step=step,
        of=run.config.steps,
        loss=round(value, 5),
        lr=float(run.scheduler.get_last_lr()[0]),
        tokens=tokens,
        tokens_per_s=round(tokens / (time.perf_counter() - tick), 1),
    )


def _metrics(run: _Run, examples: int, resumed_from: int | None, tokens_seen: int, wall: float) -> PretrainMetrics:
    """The run in a few figures; throughput counts this invocation only (a resumed run's earlier steps ran
    elsewhere)."""
    loss_first, loss_last = _end_losses([s["loss"] for s in run.log])
    return PretrainMetrics(
        out=str(run.out),
        base=run.config.base,
        device=str(run.device),
        parameters=sum(p.numel() for p in run.model.parameters()),
        vocab=len(run.tokenizer),
        examples=examples,
        steps=run.config.steps,
        resumed_from=resumed_from,
        loss_first=loss_first,
        loss_last=loss_last,
        tokens_per_s=round(tokens_seen / wall, 1) if wall > 0 else 0.0,
        wall_s=round(wall, 2),
    )


def _end_losses(losses: list[float]) -> tuple[float, float]:
    """Mean loss of the first and of the last ten logged steps (half the log each when it is shorter): whether
    the loss fell, without one noisy step deciding it."""
    if not losses:
        return math.nan, math.nan
    k = min(10, max(1, len(losses) // 2))
    return round(sum(losses[:k]) / k, 5), round(sum(losses[-k:]) / k, 5)


def _write_log(out: Path, config: PretrainConfig, log: list[dict[str, Any]], metrics: PretrainMetrics | None) -> None:
    body = {"metrics": metrics.model_dump() if metrics else None, "config": config.model_dump(), "steps": log}
    (out / LOG_FILE).write_text(json.dumps(body, indent=1) + "\n")
