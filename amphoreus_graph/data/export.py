"""`amphoreus export sft`: a society's samples as a chat-format SFT dataset, filtered and deduplicated,
with a dataset card. The output loads with `datasets.load_dataset("json" | "parquet", data_files=...)`."""

from __future__ import annotations

import hashlib
import json
import re
import statistics
from collections import Counter
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from amphoreus_graph.bench.contamination import is_contaminated
from amphoreus_graph.data.text_quality import quality_lines, text_quality
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.layout import RunDir
from amphoreus_graph.policy.discretion import guarded
from amphoreus_graph.society.config import stored_config
from amphoreus_graph.society.samples import Sample, iter_samples

Format = Literal["jsonl", "parquet"]


class SftFilters(BaseModel):
    """Which samples go in; empty lists mean no restriction."""

    paths: list[str] = Field(default_factory=list, description="keep only these Paths (repeatable)")
    agents: list[str] = Field(default_factory=list, description="keep only these agents (repeatable)")
    cycles: list[int] = Field(default_factory=list, description="keep only these cycles (repeatable)")
    actions: list[str] = Field(default_factory=list, description="keep only these actions (repeatable)")
    exclude_fallback: bool = Field(
        default=True, description="drop turns a stand-in decided when the model failed (they are not the model's)"
    )
    exclude_guarded: bool = Field(
        default=True,
        description="drop turns whose reply said a secret and was asked again or redacted (flags secret_repaired, "
        "secret_redacted): the reply is not what the model said",
    )
    min_judge_score: float | None = Field(
        default=None, description="keep only judged turns whose own decision scored at least this (1-10)"
    )
    judge_scores: dict[str, float] = Field(
        default_factory=dict, description="sample id -> its original decision's score (see `original_scores`)"
    )

    def keep(self, sample: Sample) -> bool:
        if self.min_judge_score is not None and self.judge_scores.get(sample.id, -1.0) < self.min_judge_score:
            return False  # unjudged samples have no score, so they cannot pass a minimum
        return (
            (not self.paths or sample.path in self.paths)
            and (not self.agents or sample.agent in self.agents)
            and (not self.cycles or sample.cycle in self.cycles)
            and (not self.actions or sample.decision.action in self.actions)
            and not (self.exclude_fallback and "fallback" in sample.flags)
        )

    def check_matched(self, seen: dict[str, set[Any]]) -> None:
        """A filter value no sample of the runs has is a typo, not a wish for an empty dataset: one line."""
        for flag, wanted in (("--path", self.paths), ("--agent", self.agents), ("--cycle", self.cycles)):
            if missing := [v for v in wanted if v not in seen[flag]]:
                raise AmphoreusError(
                    f"{flag} {missing[0]!r}: no sample of these runs has it; expected one of {sorted(seen[flag])}"
                )
        if missing := [v for v in self.actions if v not in seen["--action"]]:
            raise AmphoreusError(
                f"--action {missing[0]!r}: no sample of these runs took it; expected one of {sorted(seen['--action'])}"
            )


class ExportReport(BaseModel):
    rows: int
    read: int
    filtered_out: int
    guarded: int = Field(default=0, description="rows dropped because the discretion guard changed their reply")
    exact_duplicates: int
    near_duplicates: int
    contaminated: int = Field(description="rows dropped for quoting a benchmark item")
    files: list[str]


def _normalised(text: str) -> str:
    """Near-duplicate key: case, digits, punctuation and spacing do not make two samples different."""
    return re.sub(r"\s+", " ", re.sub(r"[\d\W_]+", " ", text.lower())).strip()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def original_scores(judged: list[Path]) -> dict[str, float]:
    """What the panels gave each judged turn's own decision, from folders written by `amphoreus judge`."""
    from amphoreus_graph.data.dpo import read_judgements

    return {
        j.sample_id: c.score
        for folder in judged
        for j in read_judgements(folder)
        for c in j.candidates
        if c.candidate.origin == "original"
    }


def sft_row(sample: Sample) -> dict[str, Any]:
    """A chat example (system, user, assistant = the Decision as JSON) with metadata columns."""
    return {
        "messages": sample.messages,
        "id": sample.id,
        "run": sample.run,
        "world": sample.world,
        "cycle": sample.cycle,
        "round": sample.round,
        "agent": sample.agent,
        "path": sample.path,
        "action": sample.decision.action,
        "model": sample.model,
        "flags": sample.flags,
    }


def _run_samples(runs: Iterable[Path]) -> Iterator[Sample]:
    for run in runs:
        folder = RunDir(run).samples
        if not folder.is_dir():
            raise AmphoreusError(f"{folder}: no such directory; expected a run written by `amphoreus simulate`")
        yield from iter_samples(folder)


def export_sft(
    runs: list[Path], out: Path, *, fmt: Format = "jsonl", filters: SftFilters | None = None
) -> ExportReport:
    """Stream the runs' samples through the filters and both dedupe passes into OUT/train.{jsonl,parquet}."""
    filters = filters or SftFilters()
    exact: set[str] = set()
    near: set[str] = set()
    counts = Counter[str]()
    rows: list[dict[str, Any]] = []
    seen: dict[str, set[Any]] = {"--path": set(), "--agent": set(), "--cycle": set(), "--action": set()}
    for sample in _run_samples(runs):
        counts["read"] += 1
        for flag, value in zip(seen, (sample.path, sample.agent, sample.cycle, sample.decision.action), strict=True):
            seen[flag].add(value)
        if not filters.keep(sample):
            counts["filtered_out"] += 1
            continue
        if filters.exclude_guarded and guarded(sample.flags):
            counts["guarded"] += 1
            continue
        text = "\n".join(m["content"] for m in sample.messages)
        if is_contaminated(text):
            counts["contaminated"] += 1
            continue
        key, fuzzy = _digest(text), _digest(_normalised(text))
        if key in exact:
            counts["exact_duplicates"] += 1
            continue
        if fuzzy in near:
            counts["near_duplicates"] += 1
            continue
        exact.add(key)
        near.add(fuzzy)
        rows.append(sft_row(sample))
    filters.check_matched(seen)
    out.mkdir(parents=True, exist_ok=True)
    data_file = out / f"train.{fmt}"
    _write(rows, data_file, fmt)
    (out / "README.md").write_text(dataset_card(rows, runs, fmt, counts), encoding="utf-8")
    return ExportReport(
        rows=len(rows),
        read=counts["read"],
        filtered_out=counts["filtered_out"],
        guarded=counts["guarded"],
        exact_duplicates=counts["exact_duplicates"],
        near_duplicates=counts["near_duplicates"],
        contaminated=counts["contaminated"],
        files=[str(data_file), str(out / "README.md")],
    )


def _write(rows: list[dict[str, Any]], path: Path, fmt: Format) -> None:
    if fmt == "jsonl":
        with open(path, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")
        return
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise AmphoreusError("--format parquet: needs pyarrow (pip install pyarrow, or use --format jsonl)") from None
    pq.write_table(pa.Table.from_pylist(rows), path)


PROVENANCE = ("scenario", "model", "seed", "cycles", "rounds")


def _provenance(runs: list[Path]) -> list[dict[str, Any]]:
    found = []
    for run in runs:
        config = stored_config(run) if RunDir(run).config.is_file() else None  # Studio's runs have none
        found.append({"run": run.name, **{k: getattr(config, k, None) for k in PROVENANCE}})
    return found


def dataset_card(rows: list[dict[str, Any]], runs: list[Path], fmt: Format, counts: Counter[str]) -> str:
    """README.md for the dataset: what is in it, how it was made, and from which worlds (in no world's words)."""
    worlds = Counter(r["world"] or "(none)" for r in rows)
    paths = Counter(r["path"] for r in rows)
    actions = Counter(r["action"] for r in rows)
    lengths = [len(r["messages"][-1]["content"]) for r in rows] or [0]
    prompt = [sum(len(m["content"]) for m in r["messages"][:-1]) for r in rows] or [0]
    versions = {name: _version(name) for name in ("amphoreus-graph", "langgraph", "chromadb", "sentence-transformers")}
    lines = [
        "# amphoreus-graph SFT dataset",
        "",
        "Chat-format examples from simulated societies: the system and user messages an agent saw, and its",
        "Decision (JSON) as the assistant reply.",
        "Metadata columns: run, world, cycle, round, agent, path, action, model, flags.",
        "",
        f'Load it: `datasets.load_dataset("{"json" if fmt == "jsonl" else "parquet"}", data_files="train.{fmt}")`.',
        "",
        f"- rows: {len(rows)} (read {counts['read']}, filtered out {counts['filtered_out']}, "
        f"reply changed by the discretion guard {counts['guarded']}, "
        f"exact duplicates {counts['exact_duplicates']}, near duplicates {counts['near_duplicates']}, "
        f"quoting a benchmark item {counts['contaminated']})",
        "- replies the discretion guard changed because they said a secret (flags secret_repaired, secret_redacted) "
        f"are dropped unless `--keep-guarded`; kept: {sum(guarded(r['flags']) for r in rows)}",
        f"- assistant reply length (chars): {_spread(lengths)}",
        f"- prompt length (chars): {_spread(prompt)}",
        "",
        "## Text quality",
        "",
        *quality_lines(text_quality(rows)),
        "",
        "## Rows per world",
        "",
        *[f"- {w}: {n}" for w, n in sorted(worlds.items())],
        "",
        "## Rows per Path",
        "",
        *[f"- {p}: {n}" for p, n in sorted(paths.items())],
        "",
        "## Rows per action",
        "",
        *[f"- {a}: {n}" for a, n in sorted(actions.items())],
        "",
        "## Provenance",
        "",
        *[f"- {json.dumps(p, sort_keys=True)}" for p in _provenance(runs)],
        f"- versions: {json.dumps(versions, sort_keys=True)}",
        "",
    ]
    return "\n".join(lines)


def _spread(values: list[int]) -> str:
    return f"mean {statistics.mean(values):.0f}, min {min(values)}, max {max(values)}"


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"
