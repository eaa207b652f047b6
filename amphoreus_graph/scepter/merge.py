"""Merge a finished society's shards into RUN/samples/, checked: nothing lost, nothing twice.

Each society's cycle shard becomes RUN/samples/cycle-NNNN-SOCIETY.jsonl (a hard link where the filesystem allows,
so merging costs no disk; a copy elsewhere), after every line was read back: its id must be new within the society,
name the society and the shard's cycle, and the society's lines must add up to what its summary says it wrote.
Reading is line by line (flat memory); only one shard's ids are held at a time. `iter_samples(RUN/samples)` and
`amphoreus export sft RUN` then see every society's samples, cycle by cycle.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from amphoreus_graph.atomic import write_json
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import SHARD_GLOB, RunDir

_SHARD = re.compile(r"^cycle-(\d{4,})\.jsonl$")


class MergedSociety(BaseModel):
    society: str
    samples: int
    files: list[str]


def merge_society(run: Path, society: str, society_dir: Path, expected: int) -> MergedSociety:
    """Check one finished society's shards and put them under RUN/samples/ (idempotent)."""
    source = RunDir(society_dir).samples
    target = RunDir(run).samples
    target.mkdir(parents=True, exist_ok=True)
    shards = [(shard, m.group(1)) for shard in sorted(source.glob(SHARD_GLOB)) if (m := _SHARD.match(shard.name))]
    placed = [(shard, target / f"cycle-{cycle}-{society}.jsonl") for shard, cycle in shards]
    if placed and all(_same(shard, merged) for shard, merged in placed):
        # Linked earlier, which happens only after every line was checked: nothing to read again.
        return MergedSociety(society=society, samples=expected, files=[m.name for _, m in placed])
    total = sum(_check_shard(shard, society, int(cycle)) for shard, cycle in shards)
    if total != expected:
        raise AmphoreusError(
            f"{source}: {total} samples on disk but the society's summary says {expected}; expected them to agree"
        )
    for shard, merged in placed:
        _place(shard, merged)
    return MergedSociety(society=society, samples=total, files=[m.name for _, m in placed])


def _same(source: Path, target: Path) -> bool:
    try:
        return os.path.samefile(source, target)
    except OSError:
        return False


def _check_shard(shard: Path, society: str, cycle: int) -> int:
    seen: set[str] = set()
    prefix = f"{society}/c{cycle}/"
    with open(shard, encoding="utf-8") as handle:
        for number, line in enumerate(handle, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError:
                raise AmphoreusError(f"{shard}:{number}: not a JSON line; expected one sample per line") from None
            sample_id = str(row.get("id", ""))
            if not sample_id.startswith(prefix) or row.get("run") != society or row.get("cycle") != cycle:
                raise AmphoreusError(f"{shard}:{number}: sample {sample_id!r} does not belong here; expected {prefix}…")
            if sample_id in seen:
                raise AmphoreusError(f"{shard}:{number}: sample {sample_id!r} appears twice; expected each once")
            seen.add(sample_id)
    return len(seen)


def _place(source: Path, target: Path) -> None:
    """Atomically make `target` the same bytes as `source`: a hard link, or a copy across filesystems."""
    tmp = target.with_name(target.name + ".tmp")
    tmp.unlink(missing_ok=True)
    try:
        os.link(source, tmp)
    except OSError:
        shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def write_manifest(run: Path, merged: list[MergedSociety], extra: dict[str, Any]) -> Path:
    """RUN/samples/manifest.json: which file holds which society's samples, and how many."""
    path = RunDir(run).manifest
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        **extra,
        "samples": sum(m.samples for m in merged),
        "societies": [m.model_dump() for m in sorted(merged, key=lambda m: m.society)],
    }
    write_json(path, payload)
    return path
