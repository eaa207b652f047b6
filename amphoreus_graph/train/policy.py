"""`--model pes:CKPT`: a trained checkpoint decides heirs' turns.

The turn is rendered like every sample (`render_messages`) through the checkpoint's chat template; the reply
is steered to start with `{"action": "` (cheap constrained decoding: the JSON object and its first key are
given, everything after is the model's), generated greedily (or at the policy's temperature) and parsed with
`parse_decision`. A reply that does not parse or names an action/target not on offer is sampled again (two
more tries at temperature 0.8); then the offline policy decides and the turn is flagged `fallback`.
`stats` counts generations and parses, so `parse_rate` is measured, not assumed.

One model per checkpoint per process, shared by every policy on it; generation runs in a worker thread
(`asyncio.to_thread`) behind a lock, so the event loop keeps serving memory and other societies meanwhile.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.policy.base import Decision, PolicyResult, TurnContext
from amphoreus_graph.policy.llm import MalformedOutput, parse_decision
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import render_messages
from amphoreus_graph.train.extras import TRAIN_EXTRA_HINT

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

STEER = '{"action": "'
RETRY_TEMPERATURE = 0.8
TOP_P = 0.9  # nucleus sampling: a tiny model's long tail is mostly broken JSON


class ParseStats(BaseModel):
    """How often the model's replies were usable."""

    attempts: int = 0
    parsed: int = 0
    decisions: int = 0
    fallbacks: int = 0
    first_try: int = 0

    @property
    def parse_rate(self) -> float:
        """Parsed replies over generations (every try counts)."""
        return self.parsed / self.attempts if self.attempts else 0.0

    @property
    def decision_rate(self) -> float:
        """Decisions the model made (on any try) over all decisions; the rest fell back to the offline policy."""
        return (self.decisions - self.fallbacks) / self.decisions if self.decisions else 0.0


@dataclass
class PESModel:
    """A loaded checkpoint: model, tokenizer, device and the lock that serialises generation on it."""

    path: Path
    model: Any  # a transformers PreTrainedModel (typed loosely: its stubs fight mypy)
    tokenizer: PreTrainedTokenizerBase
    device: Any
    context: int
    lock: threading.Lock = field(default_factory=threading.Lock)

    def generate(
        self, messages: list[dict[str, str]], *, temperature: float | None, seed: int, max_new: int
    ) -> tuple[str, int, int]:
        """One reply (without the chat markup; greedy when temperature is None or 0), tokens in and out."""
        import torch

        from amphoreus_graph.train.tokenizer import chat_ids

        steer = self.tokenizer.encode(STEER, add_special_tokens=False)
        ids = chat_ids(self.tokenizer, messages, generation_prompt=True) + steer
        ids = ids[-(self.context - max_new) :]  # a long prompt loses its beginning, as in training
        sample = bool(temperature and temperature > 0)
        devices = [self.device] if self.device.type == "cuda" else []
        with self.lock, torch.inference_mode(), torch.random.fork_rng(devices=devices):  # the caller's RNG untouched
            torch.manual_seed(seed)
            input_ids = torch.tensor([ids], device=self.device)
            out = self.model.generate(
                input_ids=input_ids,
                attention_mask=torch.ones_like(input_ids),
                max_new_tokens=max_new,
                do_sample=sample,
                temperature=temperature if sample else None,
                top_p=TOP_P if sample else None,
                top_k=None,
                eos_token_id=self.tokenizer.eos_token_id,
                pad_token_id=self.tokenizer.pad_token_id,
            )
        new = out[0, len(ids) :]
        reply = str(self.tokenizer.decode(new, skip_special_tokens=True))
        return STEER + reply, len(ids), len(new)


_loaded: dict[Path, PESModel] = {}
_loading = threading.Lock()


def load_pes_model(path: Path, device: str = "auto") -> PESModel:
    """Load a checkpoint once per process (later calls share it)."""
    key = path.resolve()
    with _loading:
        if key in _loaded:
            return _loaded[key]
        if not (path / "config.json").is_file():
            raise ModelSpecError(f"--model pes:{path}: no checkpoint there; expected a folder written by `train`")
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer

            from amphoreus_graph.train.device import pick_device
            from amphoreus_graph.train.quiet import quiet_libraries
        except ImportError:
            raise ModelSpecError(f"--model pes:{path}: needs torch and transformers ({TRAIN_EXTRA_HINT})") from None
        where = pick_device(device)
        with quiet_libraries():
            tokenizer = AutoTokenizer.from_pretrained(path)
            model: Any = AutoModelForCausalLM.from_pretrained(path)
        if not tokenizer.chat_template:
            raise ModelSpecError(f"--model pes:{path}: the tokenizer has no chat template")
        model = model.to(where).eval()
        if where.type == "cuda":
            model = model.to(dtype=torch.bfloat16)
        context = int(getattr(model.config, "max_position_embeddings", 0) or 1024)
        _loaded[key] = PESModel(path=key, model=model, tokenizer=tokenizer, device=where, context=context)
        return _loaded[key]


class _LoopLocks:
    """One asyncio lock per event loop: turns queue on the loop, not in worker threads."""

    def __init__(self) -> None:
        self._by_loop: dict[int, asyncio.Lock] = {}

    def get(self) -> asyncio.Lock:
        key = id(asyncio.get_running_loop())
        if key not in self._by_loop:
            self._by_loop[key] = asyncio.Lock()
        return self._by_loop[key]


class PESPolicy:
    """A trained PES checkpoint as a Policy; never raises for a bad reply, it retries, then falls back."""

    def __init__(
        self,
        model: PESModel,
        *,
        name: str | None = None,
        temperature: float | None = None,
        retries: int = 2,
        max_new_tokens: int = 128,
    ) -> None:
        self.name = name or f"pes:{model.path}"
        self.model = model
        self.temperature = temperature
        self.retries = retries
        self.max_new_tokens = max_new_tokens
        self.stats = ParseStats()
        self._fallback = OfflinePathPolicy(salt="fallback")
        self._locks = _LoopLocks()
        self._calls: dict[str, int] = {}

    @property
    def parse_rate(self) -> float:
        return self.stats.parse_rate

    def _seed(self, turn: TurnContext, attempt: int) -> int:
        """Seeded per turn, try and repeat call, so sampled runs are reproducible yet k samples differ."""
        key = f"{turn.run_id}|{turn.seed}|{turn.cycle}|{turn.round}|{turn.heir}"
        call = self._calls.get(key, 0)
        if attempt == 0:
            self._calls[key] = call + 1
            if len(self._calls) > 4096:  # bounded: repeat calls on one turn come close together
                self._calls.pop(next(iter(self._calls)))
        digest = hashlib.sha256(f"{key}|{call}|{attempt}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        result = PolicyResult(decision=Decision(action=next(iter(turn.options))))
        messages = render_messages(turn)
        self.stats.decisions += 1
        problem = ""
        for attempt in range(1 + self.retries):
            temperature = self.temperature if attempt == 0 else max(RETRY_TEMPERATURE, self.temperature or 0.0)
            seed = self._seed(turn, attempt)
            async with self._locks.get():
                try:
                    reply, tokens_in, tokens_out = await asyncio.to_thread(
                        self.model.generate,
                        messages,
                        temperature=temperature,
                        seed=seed,
                        max_new=self.max_new_tokens,
                    )
                except Exception as exc:  # a broken checkpoint or device error: count it, try again
                    result.failures += 1
                    problem = f"{type(exc).__name__}: {exc}"
                    continue
                finally:
                    result.model_calls += 1
                    self.stats.attempts += 1
                result.tokens_in += tokens_in
                result.tokens_out += tokens_out
            try:
                result.decision = parse_decision(reply, turn)
            except MalformedOutput as exc:
                problem = f"MalformedOutput: {exc}"
                continue
            self.stats.parsed += 1
            if attempt == 0:
                self.stats.first_try += 1
            else:
                result.flags.append("retried")
            return result
        self.stats.fallbacks += 1
        result.decision = self._fallback.decide(turn)
        result.flags.append("fallback")
        result.error = problem[:300]
        return result


def load_pes_policy(spec_path: str, *, temperature: float | None = None) -> PESPolicy:
    """`pes:CKPT` → a PESPolicy (the checkpoint loads once per process)."""
    if not spec_path:
        raise ModelSpecError("--model 'pes:': expected pes:CKPT, a folder written by `amphoreus train`")
    return PESPolicy(load_pes_model(Path(spec_path)), name=f"pes:{spec_path}", temperature=temperature)
