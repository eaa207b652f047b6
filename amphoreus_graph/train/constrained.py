"""Constrained decoding: a PES model writes a Decision that is valid by construction.

The reply is written in the training format (`decision_json`: keys sorted, so action, rationale, speech,
target), one field at a time, so the model always conditions on the text training showed it:

- **action**: every offered action's continuation `{"action": "<a>", "rationale": "` is scored by the model's
  own log-probability, all in one batched forward pass over the prompt's shared cache; greedy takes the most
  likely, a temperature samples from the softmax of those log-probabilities;
- **rationale, speech**: generated token by token (greedy, or temperature with nucleus sampling) until the model
  closes the string with an unescaped quote, ends its reply or reaches the cap; the text is unescaped leniently
  and written back escaped as `json.dumps` would, so the rest of the reply stays canonical;
- **target**: the action's valid targets (`null` when it takes none) scored the same way, through `}` and EOS.

Each stage tokenises the whole reply so far afresh (a token boundary at a field's edge must be the one training
saw). Besides the decision it reports what free decoding would have done: the probability mass the model put
on the offered actions, and whether the chosen action and target were its top token at every step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from amphoreus_graph.contracts.turn import Decision, Option
from amphoreus_graph.train.tokenizer import chat_ids

if TYPE_CHECKING:
    import torch

    from amphoreus_graph.train.policy import PESModel

TOP_P = 0.9  # nucleus sampling for free text: a tiny model's long tail is mostly noise


@dataclass
class Written:
    """A decision as the model wrote it, with what it cost and how freely the model agreed."""

    decision: Decision
    reply: str
    tokens_in: int
    tokens_out: int
    action_mass: float  # P(the model writes one of the offered actions and closes it), summed over them
    top_choice: bool  # the chosen action and target were the model's most likely token at every step
    fields_closed: int  # free-text fields (of 2) the model closed itself rather than being cut at the cap


@dataclass
class _Choice:
    index: int
    mass: float
    top: bool


def _quoted(value: str | None) -> str:
    return json.dumps(value, ensure_ascii=False)


def _closing_quote(text: str) -> int | None:
    """Where an unescaped `"` ends a JSON string's content, if it does."""
    escaped = False
    for at, char in enumerate(text):
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            return at
    return None


def _unescape(raw: str) -> str:
    """A JSON string's content as text; a broken escape (e.g. one cut at the cap) loses its backslashes."""
    try:
        return str(json.loads(f'"{raw}"', strict=False))
    except ValueError:
        return raw.replace("\\", "")


def _common_prefix(rows: list[list[int]]) -> int:
    shortest = min(map(len, rows))
    for at in range(shortest):
        if any(row[at] != rows[0][at] for row in rows):
            return at
    return shortest


class _Writer:
    """One turn's decoding on a loaded model (called under the model's lock, inside inference mode)."""

    def __init__(
        self, model: PESModel, prompt: list[int], temperature: float | None, generator: torch.Generator
    ) -> None:
        self.pes = model
        self.prompt = prompt
        self.temperature = temperature if temperature and temperature > 0 else None
        self.generator = generator
        self.special = set(model.tokenizer.all_special_ids)
        self.tokens_out = 0

    def _ids(self, reply: str) -> list[int]:
        return self.prompt + list(self.pes.tokenizer.encode(reply, add_special_tokens=False))

    def _forward(self, ids: list[list[int]], cache: Any) -> torch.Tensor:
        import torch

        tensor = torch.tensor(ids, device=self.pes.device)
        return self.pes.model(input_ids=tensor, past_key_values=cache, use_cache=True).logits.float()

    def choose(self, replies: list[str], *, finished: bool = False) -> _Choice:
        """Pick one of the candidate replies by the model's log-probability of its tokens (through EOS for a
        finished reply), the shared prefix run once and the candidates' tails as one batch."""
        import torch
        from transformers import DynamicCache

        end = [self.pes.tokenizer.eos_token_id] if finished else []
        rows = [self._ids(reply) + end for reply in replies]
        shared = min(_common_prefix(rows), min(map(len, rows)) - 1)  # every candidate keeps a token to score
        cache = DynamicCache()
        head = torch.log_softmax(self._forward([rows[0][:shared]], cache)[0, -1], dim=-1)
        tails = [row[shared:] for row in rows]
        width = max(map(len, tails))
        padded = [tail + [self.pes.tokenizer.pad_token_id] * (width - len(tail)) for tail in tails]
        cache.batch_repeat_interleave(len(rows))
        rest = torch.log_softmax(self._forward(padded, cache)[:, :-1], dim=-1)
        logps, tops = [], []
        for n, tail in enumerate(tails):
            steps = torch.cat([head[None], rest[n, : len(tail) - 1]])
            wanted = torch.tensor(tail, device=steps.device)
            logps.append(steps.gather(1, wanted[:, None]).sum().item())
            tops.append(bool((steps.argmax(dim=-1) == wanted).all()))
        scores = torch.tensor(logps, dtype=torch.float64)  # an unfamiliar action's mass must not underflow
        if self.temperature is None:
            index = int(scores.argmax())
        else:
            index = int(torch.multinomial(torch.softmax(scores / self.temperature, 0), 1, generator=self.generator))
        self.tokens_out += len(tails[index])
        return _Choice(index=index, mass=float(scores.exp().sum()), top=tops[index])

    def _pick(self, logits: torch.Tensor) -> int:
        import torch

        if self.temperature is None:
            return int(logits.argmax())
        probs, order = torch.sort(torch.softmax(logits.cpu() / self.temperature, dim=-1), descending=True)
        probs[(probs.cumsum(0) - probs) >= TOP_P] = 0.0  # keep the smallest head holding TOP_P of the mass
        return int(order[torch.multinomial(probs, 1, generator=self.generator)])

    def text(self, reply: str, cap: int) -> tuple[str, bool]:
        """A string field's content, written by the model after `reply` (which ends with its opening quote);
        whether the model closed it itself."""
        from transformers import DynamicCache

        cache = DynamicCache()
        logits = self._forward([self._ids(reply)], cache)[0, -1]
        new: list[int] = []
        while len(new) < cap:
            token = self._pick(logits)
            if token in self.special:  # the model ended its reply inside the string
                break
            new.append(token)
            written = str(self.pes.tokenizer.decode(new))
            if (end := _closing_quote(written)) is not None:
                self.tokens_out += len(new)
                return _unescape(written[:end]), True
            logits = self._forward([[token]], cache)[0, -1]
        self.tokens_out += len(new)
        return _unescape(str(self.pes.tokenizer.decode(new))), False


def write_decision(
    model: PESModel,
    messages: list[dict[str, str]],
    options: list[Option],
    *,
    temperature: float | None,
    seed: int,
    max_field_tokens: int,
) -> Written:
    """The turn's Decision, decoded under the constraints of its options (greedy when temperature is None).

    Action names are whatever the world calls them: each is scored as the text it is, so a checkpoint can
    choose among actions it never saw in training (its log-probabilities then rest on their spelling and on
    the help the prompt shows)."""
    import torch

    budget = 2 * max_field_tokens + 96  # the reply's tokens besides the free text: keys, action, target
    prompt = chat_ids(model.tokenizer, messages, generation_prompt=True)[-(model.context - budget) :]
    generator = torch.Generator().manual_seed(seed)
    writer = _Writer(model, prompt, temperature, generator)
    opened = [f'{{"action": {_quoted(o.action)}, "rationale": "' for o in options]
    action = writer.choose(opened)
    chosen = options[action.index]
    reply = opened[action.index]
    rationale, closed_rationale = writer.text(reply, max_field_tokens)
    reply += _quoted(rationale)[1:] + ', "speech": "'
    speech, closed_speech = writer.text(reply, max_field_tokens)
    reply += _quoted(speech)[1:] + ', "target": '
    targets: list[str | None] = list(chosen.targets) or [None]
    target = writer.choose([reply + _quoted(t) + "}" for t in targets], finished=True)
    reply += _quoted(targets[target.index]) + "}"
    decision = Decision(action=chosen.action, target=targets[target.index], speech=speech, rationale=rationale)
    return Written(
        decision=decision,
        reply=reply,
        tokens_in=len(prompt),
        tokens_out=writer.tokens_out,
        action_mass=action.mass,
        top_choice=action.top and target.top,
        fields_closed=int(closed_rationale) + int(closed_speech),
    )
