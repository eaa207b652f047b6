"""What a run directory holds, named here and nowhere else: every module that reads or writes a run's files asks a
`RunDir` (or a `JudgedDir`, the expert panels' output) for their paths.

    RUN/config.json          what defines the run (`--resume` needs only the directory)
    RUN/scenario.yaml        the run's own variant of its scenario (`--scenario-overrides`), when it has one
    RUN/fork.json            a fork's plan while it replays its parent (gone once the branch is set up)
    RUN/checkpoint.sqlite    LangGraph's checkpoints (SQLite, with its -wal and -shm beside it)
    RUN/summary.json         the closing summary (a stopped run's too)
    RUN/samples/             one training sample per turn, a JSONL shard per cycle (+ manifest.json when merged)
    RUN/chronicle/           one row per round, a JSONL shard per cycle
    RUN/memory/              the run's own Chroma store (unless --memory-dir or --chroma-url)
    RUN/cache.sqlite         the model's response cache (unless --cache DIR or --no-cache)
    RUN/calls.jsonl          every model request the run sent, as it went out and came back (its call log)
    RUN/report.html          `amphoreus report`
    RUN/judged/              `amphoreus judge`: judgements.jsonl, dpo.jsonl, summary.json
    RUN/scepter.json         a Scepter run's plan, RUN/progress.json its progress, RUN/societies/NAME/ each society
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

SHARD_GLOB = "cycle-*.jsonl"  # a samples or chronicle folder's shards, one per cycle


def shard_name(cycle: int) -> str:
    return f"cycle-{cycle:04d}.jsonl"


@dataclass(frozen=True)
class RunDir:
    """The files of one run (or of one society of a Scepter run) under `root`."""

    root: Path

    SAMPLES = "samples"
    CHRONICLE = "chronicle"
    CHECKPOINT = "checkpoint.sqlite"
    CACHE = "cache.sqlite"
    CALLS = "calls.jsonl"

    @property
    def config(self) -> Path:
        return self.root / "config.json"

    @property
    def scenario(self) -> Path:
        return self.root / "scenario.yaml"

    @property
    def fork_plan(self) -> Path:
        return self.root / "fork.json"

    @property
    def checkpoint(self) -> Path:
        return self.root / self.CHECKPOINT

    def checkpoint_files(self) -> list[Path]:
        """The checkpoint and SQLite's write-ahead files beside it."""
        return [self.checkpoint, *(self.root / f"{self.CHECKPOINT}-{end}" for end in ("wal", "shm"))]

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"

    @property
    def samples(self) -> Path:
        return self.root / self.SAMPLES

    @property
    def chronicle(self) -> Path:
        return self.root / self.CHRONICLE

    @property
    def memory(self) -> Path:
        """The run's own memory store, where no other is named."""
        return self.root / "memory"

    @property
    def cache(self) -> Path:
        return self.root / self.CACHE

    @property
    def calls(self) -> Path:
        return self.root / self.CALLS

    @property
    def report(self) -> Path:
        return self.root / "report.html"

    @property
    def judged(self) -> JudgedDir:
        return JudgedDir(self.root / "judged")

    @property
    def manifest(self) -> Path:
        """What a Scepter run merged into its samples, society by society."""
        return self.samples / "manifest.json"

    @property
    def plan(self) -> Path:
        return self.root / "scepter.json"

    @property
    def progress(self) -> Path:
        return self.root / "progress.json"

    @property
    def societies(self) -> Path:
        return self.root / "societies"

    def society(self, name: str) -> RunDir:
        """One society of a Scepter run: a run directory of its own."""
        return RunDir(self.societies / name)


@dataclass(frozen=True)
class JudgedDir:
    """What `amphoreus judge` (the experts graph) writes."""

    root: Path

    JUDGEMENTS = "judgements.jsonl"
    PAIRS = "dpo.jsonl"

    @property
    def judgements(self) -> Path:
        return self.root / self.JUDGEMENTS

    @property
    def pairs(self) -> Path:
        return self.root / self.PAIRS

    @property
    def summary(self) -> Path:
        return self.root / "summary.json"
