"""Read what the data engine wrote: SFT chat rows (`export sft`) and DPO pairs (`judge` / `export dpo`)."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import JudgedDir

Messages = list[dict[str, str]]
SFT_FILES = ("train.jsonl", "train.parquet")


def _jsonl(file: Path) -> Iterator[dict[str, Any]]:
    with file.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise AmphoreusError(f"{file}:{number}: not JSON ({exc.msg})") from None


def _parquet(file: Path) -> Iterator[dict[str, Any]]:
    try:
        import pyarrow.parquet as pq
    except ImportError:
        raise AmphoreusError(f"{file}: reading parquet needs pyarrow (pip install pyarrow)") from None
    yield from pq.read_table(file).to_pylist()


def _check_messages(messages: Any, where: str) -> Messages:
    if not isinstance(messages, list) or not messages:
        raise AmphoreusError(f"{where}: expected a non-empty list of chat messages")
    for m in messages:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            raise AmphoreusError(f"{where}: every message needs a string role and content")
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def read_sft_rows(folders: list[Path]) -> list[Messages]:
    """Every chat example (system, user, assistant) of one or more `export sft` folders."""
    rows: list[Messages] = []
    for folder in folders:
        if not folder.is_dir():
            raise AmphoreusError(f"{folder}: no such directory; expected a folder written by `amphoreus export sft`")
        files = [folder / name for name in SFT_FILES if (folder / name).is_file()]
        if not files:
            raise AmphoreusError(f"{folder}: holds no {' or '.join(SFT_FILES)}; expected `amphoreus export sft` output")
        file = files[0]
        reader = _jsonl(file) if file.suffix == ".jsonl" else _parquet(file)
        for number, row in enumerate(reader, 1):
            messages = _check_messages(row.get("messages"), f"{file}: row {number}")
            if messages[-1]["role"] != "assistant":
                raise AmphoreusError(f"{file}: row {number}: the last message must be the assistant's reply")
            rows.append(messages)
    if not rows:
        raise AmphoreusError(f"{', '.join(map(str, folders))}: no training rows")
    return rows


def read_dpo_pairs(folders: list[Path]) -> list[dict[str, Messages]]:
    """TRL conversational preference rows (prompt, chosen, rejected) of `judge` or `export dpo` folders."""
    pairs: list[dict[str, Messages]] = []
    for folder in folders:
        file = JudgedDir(folder).pairs
        if not folder.is_dir():
            raise AmphoreusError(f"{folder}: no such directory; expected a folder written by `amphoreus judge`")
        if not file.is_file():
            expected = "expected `amphoreus judge` or `export dpo` output"
            raise AmphoreusError(f"{folder}: holds no {JudgedDir.PAIRS}; {expected}")
        for number, row in enumerate(_jsonl(file), 1):
            where = f"{file}: row {number}"
            pairs.append(
                {key: _check_messages(row.get(key), f"{where}: {key}") for key in ("prompt", "chosen", "rejected")}
            )
    return pairs


def split_heldout(items: list[Any], fraction: float, seed: int) -> tuple[list[Any], list[Any]]:
    """A seeded (train, held-out) split; each side keeps at least one item."""
    if len(items) < 2:
        raise AmphoreusError(f"{len(items)} DPO pair(s): need at least 2 to hold some out")
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    n_heldout = min(len(items) - 1, max(1, round(len(items) * fraction)))
    heldout = set(order[:n_heldout])
    return [x for i, x in enumerate(items) if i not in heldout], [x for i, x in enumerate(items) if i in heldout]
