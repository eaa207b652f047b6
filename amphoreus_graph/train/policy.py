"""`--model pes:CKPT`: a trained checkpoint decides agents' turns.

The turn is rendered like every sample (`render_messages`) through the checkpoint's chat template and the reply
is written by constrained decoding (`amphoreus_graph.train.constrained`): the action and target are chosen among
the turn's options by the model's own log-probabilities, the speech and rationale are the model's free text, so
every reply is a valid Decision. Only a fault (an exception in the model or on its device) falls back to the
offline policy, flagged `fallback`. `stats` counts what the model did, including what free decoding would have.

One model per checkpoint per process, shared by every policy on it; decoding runs in a worker thread
(`asyncio.to_thread`) behind a lock, so the event loop keeps serving memory and other societies meanwhile.
"""

from __future__ import annotations

import asyncio
import hashlib
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, get_args

from pydantic import BaseModel

from amphoreus_graph.contracts.turn import Decision, Option, PolicyResult, TurnContext
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.models.access import ModelAccess
from amphoreus_graph.models.gateway import Failure, Role, count_local_call, note
from amphoreus_graph.policy.offline import OfflinePathPolicy
from amphoreus_graph.policy.prompt import render_messages
from amphoreus_graph.train.checkpoint import MODEL_CONFIG
from amphoreus_graph.train.constrained import Written, write_decision
from amphoreus_graph.train.extras import TRAIN_EXTRA_HINT
from amphoreus_graph.train.hf_model import context_length, load_model

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase


class DecodeStats(BaseModel):
    """What the model did. Constrained decoding makes every reply a valid Decision, so the telling figures are
    how willingly: the probability the model gave the offered actions, and how often it would have written the
    chosen action and target unconstrained."""

    decisions: int = 0
    fallbacks: int = 0  # faults (exceptions): the offline policy decided
    scored: int = 0  # choice turns, answered by likelihood (`PESModel.choose`), nothing written
    action_mass: float = 0.0  # summed over decisions; see `mean_action_mass`
    top_choices: int = 0
    fields: int = 0
    fields_closed: int = 0

    def record(self, written: Written) -> None:
        self.action_mass += written.action_mass
        self.top_choices += written.top_choice
        self.fields += 2
        self.fields_closed += written.fields_closed

    @property
    def written(self) -> int:
        return self.decisions - self.fallbacks - self.scored

    @property
    def parse_rate(self) -> float:
        """Decisions the model made over all decisions (1.0 unless a fault fell back to the offline policy)."""
        return (self.written + self.scored) / self.decisions if self.decisions else 0.0

    @property
    def mean_action_mass(self) -> float:
        """Mean probability that the model, sampled freely at temperature 1, names one of the offered actions."""
        return self.action_mass / self.written if self.written else 0.0

    @property
    def top_choice_rate(self) -> float:
        """Share of decisions whose action and target greedy free decoding would have written token for token."""
        return self.top_choices / self.written if self.written else 0.0

    @property
    def closed_rate(self) -> float:
        """Share of speech/rationale fields the model closed itself (the rest were cut at the cap)."""
        return self.fields_closed / self.fields if self.fields else 0.0

    def summary(self) -> dict[str, float]:
        return {
            "decisions": self.decisions,
            "scored_choices": self.scored,
            "parse_rate": round(self.parse_rate, 4),
            "action_mass": round(self.mean_action_mass, 4),
            "top_choice_rate": round(self.top_choice_rate, 4),
            "closed_rate": round(self.closed_rate, 4),
        }


@dataclass
class PESModel:
    """A loaded checkpoint: model, tokenizer, device and the lock that serialises decoding on it."""

    path: Path
    model: Any  # a transformers PreTrainedModel (typed loosely: its stubs fight mypy)
    tokenizer: PreTrainedTokenizerBase
    device: Any
    context: int
    dtype: str = "fp32"
    lock: threading.Lock = field(default_factory=threading.Lock)

    def write(
        self,
        messages: list[dict[str, str]],
        options: list[Option],
        *,
        temperature: float | None,
        seed: int,
        max_field_tokens: int,
    ) -> Written:
        """One constrained reply (greedy when temperature is None or 0)."""
        import torch

        with self.lock, torch.inference_mode():
            return write_decision(
                self, messages, options, temperature=temperature, seed=seed, max_field_tokens=max_field_tokens
            )

    def choose(self, messages: list[dict[str, str]], options: list[Option]) -> Chosen:
        """A choice turn: the option whose text the model finds likeliest as its own speech after this prompt,
        by mean log-probability per token (length-normalised, as lm-eval-harness scores multiple choice). A
        model pre-trained on society turns never saw lettered options, so writing a letter would measure only
        its prior over letters; the likelihood of each answer in the agent's voice measures what it learned."""
        import torch

        from amphoreus_graph.policy.prompt import decision_json
        from amphoreus_graph.train.logprobs import completion_logp

        scores, tokens = [], 0
        with self.lock, torch.inference_mode():
            for option in options:
                reply = decision_json(Decision(action=option.action, speech=option.help or ""))
                logp, n = completion_logp(
                    self.model, self.tokenizer, messages, [{"role": "assistant", "content": reply}], self.device
                )
                scores.append(logp / max(1, n))
                tokens += n
        best = max(range(len(options)), key=lambda i: (scores[i], -i))
        return Chosen(option=options[best], scores=scores, tokens=tokens)


@dataclass
class Chosen:
    """A choice turn answered by likelihood: the option picked, each option's score, the tokens scored."""

    option: Option
    scores: list[float]
    tokens: int


DecodeDtype = Literal["fp32", "bf16"]
DTYPES: tuple[str, ...] = get_args(DecodeDtype)
_loaded: dict[tuple[Path, str, str], PESModel] = {}
_loading = threading.Lock()


def load_pes_model(path: Path, device: str = "auto", dtype: str = "fp32") -> PESModel:
    """Load a checkpoint once per process, device and dtype (later calls share it). Decoding runs in `dtype` on
    every device (fp32 by default, so a CPU and a GPU table can be compared decision by decision; bf16 on request)."""
    if dtype not in DTYPES:
        raise ModelSpecError(f"--dtype {dtype!r}: expected one of {list(DTYPES)}")
    key = (path.resolve(), device, dtype)
    with _loading:
        if key in _loaded:
            return _loaded[key]
        if not (path / MODEL_CONFIG).is_file():
            raise ModelSpecError(f"--model pes:{path}: no checkpoint there; expected a folder written by `train`")
        try:
            import torch
            import transformers  # noqa: F401 - here for the extra's one-line error; hf_model imports it

            from amphoreus_graph.train.device import pick_device
            from amphoreus_graph.train.quiet import quiet_libraries
        except ImportError:
            raise ModelSpecError(f"--model pes:{path}: needs torch and transformers ({TRAIN_EXTRA_HINT})") from None
        where = pick_device(device)
        with quiet_libraries():
            model, tokenizer = load_model(path)
        if not tokenizer.chat_template:
            raise ModelSpecError(f"--model pes:{path}: the tokenizer has no chat template")
        weights = torch.bfloat16 if dtype == "bf16" else torch.float32
        model = model.to(where, dtype=weights).eval()
        _loaded[key] = PESModel(
            path=key[0], model=model, tokenizer=tokenizer, device=where, context=context_length(model), dtype=dtype
        )
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
    """A trained PES checkpoint as a Policy; never raises: a fault falls back to the offline policy."""

    def __init__(
        self,
        model: PESModel,
        *,
        name: str | None = None,
        temperature: float | None = None,
        max_field_tokens: int = 64,
    ) -> None:
        self.name = name or f"pes:{model.path}"
        self.model = model
        self.temperature = temperature
        self.max_field_tokens = max_field_tokens
        self.stats = DecodeStats()
        self._fallback = OfflinePathPolicy(salt="fallback")
        self._locks = _LoopLocks()
        self._calls: dict[str, int] = {}

    @property
    def parse_rate(self) -> float:
        return self.stats.parse_rate

    def _seed(self, turn: TurnContext) -> int:
        """Seeded per turn and repeat call, so sampled runs are reproducible yet k samples of a turn differ."""
        key = f"{turn.run_id}|{turn.seed}|{turn.cycle}|{turn.round}|{turn.agent}"
        call = self._calls.get(key, 0)
        self._calls[key] = call + 1
        if len(self._calls) > 4096:  # bounded: repeat calls on one turn come close together
            self._calls.pop(next(iter(self._calls)))
        digest = hashlib.sha256(f"{key}|{call}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        result = PolicyResult(decision=Decision(action=turn.offered[0]), model_calls=1)
        self.stats.decisions += 1
        seed = self._seed(turn)
        async with self._locks.get():
            started = time.perf_counter()
            try:
                if turn.choice:
                    chosen = await asyncio.to_thread(self.model.choose, render_messages(turn), turn.options)
                else:
                    written = await asyncio.to_thread(
                        self.model.write,
                        render_messages(turn),
                        turn.options,
                        temperature=self.temperature,
                        seed=seed,
                        max_field_tokens=self.max_field_tokens,
                    )
            except Exception as exc:  # a broken checkpoint or device error: the offline policy decides
                count_local_call(Role.DECIDE, latency_s=time.perf_counter() - started, failure=Failure.OTHER)
                note(Role.DECIDE, fallbacks=1)
                self.stats.fallbacks += 1
                result.failures += 1
                result.decision = self._fallback.decide(turn)
                result.flags.append("fallback")
                result.error = f"{type(exc).__name__}: {exc}"[:300]
                return result
        latency_s = time.perf_counter() - started
        if turn.choice:
            count_local_call(Role.DECIDE, latency_s=latency_s, tokens_in=chosen.tokens)
            self.stats.scored += 1
            result.decision = Decision(action=chosen.option.action)
            result.tokens_in = chosen.tokens
            return result
        count_local_call(Role.DECIDE, latency_s=latency_s, tokens_in=written.tokens_in, tokens_out=written.tokens_out)
        self.stats.record(written)
        result.decision = written.decision
        result.tokens_in, result.tokens_out = written.tokens_in, written.tokens_out
        return result


def load_pes_policy(
    spec_path: str,
    access: ModelAccess | None = None,
    *,
    temperature: float | None = None,
    max_field_tokens: int = 64,
    device: str = "auto",
    dtype: str = "fp32",
) -> PESPolicy:
    """`pes:CKPT` → a PESPolicy (the checkpoint loads once per process, device and dtype). As the `pes:` --model
    family it is given the run's `access`, of which a local model uses the temperature."""
    if access is not None and temperature is None:
        temperature = access.temperature
    if not spec_path:
        raise ModelSpecError("--model 'pes:': expected pes:CKPT, a folder written by `amphoreus train`")
    model = load_pes_model(Path(spec_path), device, dtype)
    return PESPolicy(model, name=f"pes:{spec_path}", temperature=temperature, max_field_tokens=max_field_tokens)
