"""The PES tokenizer: byte-level BPE trained on the society's own text, with a chat template of role tokens.

Roles are special tokens (`<|system|>`, `<|user|>`, `<|assistant|>`) and every message ends with `<|end|>`,
the EOS, so generation stops after one reply. The template renders a prompt with `add_generation_prompt` as a
token-exact prefix of prompt + reply, which TRL's DPO tokenisation relies on.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from amphoreus_graph.train.corpus import Messages

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase, PreTrainedTokenizerFast

END, PAD, BOS = "<|end|>", "<|pad|>", "<|bos|>"
ROLES = ("system", "user", "assistant")
SPECIAL_TOKENS = [PAD, BOS, END, *(f"<|{role}|>" for role in ROLES)]
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\n' + message['content'] + '<|end|>\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\n' }}{% endif %}"
)


def train_tokenizer(texts: Iterable[str], vocab_size: int) -> PreTrainedTokenizerFast:
    """Byte-level BPE (GPT-2 pre-tokenisation, so any byte is representable) fitted to the texts."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.BPE())
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    core.train_from_iterator(texts, trainer=trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core, bos_token=BOS, eos_token=END, pad_token=PAD, model_max_length=1_000_000
    )
    tokenizer.add_special_tokens({"additional_special_tokens": SPECIAL_TOKENS[3:]})
    tokenizer.chat_template = CHAT_TEMPLATE
    return tokenizer


def adopt_chat_template(tokenizer: PreTrainedTokenizerBase) -> int:
    """Give a base checkpoint's tokenizer our template if it has none; returns how many tokens were added."""
    if tokenizer.chat_template:
        added = 0
    else:
        added = tokenizer.add_special_tokens({"additional_special_tokens": [*SPECIAL_TOKENS[3:], END]})
        tokenizer.eos_token = END
        tokenizer.chat_template = CHAT_TEMPLATE
    if tokenizer.pad_token is None:
        tokenizer.pad_token = tokenizer.eos_token
    return added


def chat_ids(tokenizer: PreTrainedTokenizerBase, messages: Messages, *, generation_prompt: bool = False) -> list[int]:
    ids: Any = tokenizer.apply_chat_template(messages, tokenize=True, add_generation_prompt=generation_prompt)
    if hasattr(ids, "keys"):  # transformers 5 returns a BatchEncoding
        ids = ids["input_ids"]
    return [int(i) for i in ids]


def encode_example(
    tokenizer: PreTrainedTokenizerBase, messages: Messages, *, reply_only: bool
) -> tuple[list[int], int]:
    """Token ids of a whole chat example and where the loss starts (after the prompt, or 0 for the full text)."""
    ids = chat_ids(tokenizer, messages)
    if not reply_only:
        return ids, 0
    prompt = chat_ids(tokenizer, messages[:-1], generation_prompt=True)
    start = 0
    while start < min(len(prompt), len(ids)) and prompt[start] == ids[start]:
        start += 1  # normally len(prompt); a base model's template may merge tokens across the boundary
    return ids, start


def corpus_texts(rows: Iterable[Messages]) -> Iterable[str]:
    """What the BPE learns from: every message's content."""
    for messages in rows:
        for message in messages:
            yield message["content"]
