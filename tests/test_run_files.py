"""config.json and summary.json are the models of what writes them (RunConfig, RunSummary) with a format_version: a
file of a newer format is refused in one line, never misread."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from amphoreus_graph.layout import RunDir
from amphoreus_graph.society.config import CONFIG_FORMAT, RunConfig, stored_config
from amphoreus_graph.society.runner import Simulation
from amphoreus_graph.society.summary import SUMMARY_FORMAT, RunSummary


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> RunDir:
    out = tmp_path_factory.mktemp("files") / "run"
    asyncio.run(Simulation(RunConfig(scenario="trio", cycles=1, rounds=2, out=out)).run())
    return RunDir(out)


def test_both_files_say_their_format_and_parse_as_their_models(run: RunDir) -> None:
    config, summary = json.loads(run.config.read_text()), json.loads(run.summary.read_text())
    assert config["format_version"] == CONFIG_FORMAT and summary["format_version"] == SUMMARY_FORMAT
    assert RunConfig.model_validate(config).scenario == "trio"
    parsed = RunSummary.model_validate(summary)
    assert parsed.payload() == summary, "every field of summary.json is in the model, nothing more"
    assert "stopped" not in summary, "a run that ran to its end says nothing about stopping"


def copy_with(run: RunDir, tmp_path: Path, file: str, **changes: object) -> RunDir:
    """A copy of the run whose `file` (config or summary) has `changes`."""
    copy = RunDir(tmp_path / "copy")
    copy.root.mkdir()
    for name in (run.config, run.summary):
        (copy.root / name.name).write_bytes(name.read_bytes())
    target = getattr(copy, file)
    target.write_text(json.dumps(json.loads(target.read_text()) | changes))
    return copy


def test_a_newer_config_is_refused_in_one_line(run: RunDir, tmp_path: Path, cli) -> None:
    newer = copy_with(run, tmp_path, "config", format_version=CONFIG_FORMAT + 1)
    code, _, err = cli("simulate", "--resume", str(newer.root))
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "config.json" in err and "format_version" in err
    assert json.loads(newer.config.read_text())["format_version"] == CONFIG_FORMAT + 1, "nothing rewritten"


def test_a_newer_summary_is_refused_by_the_report(run: RunDir, tmp_path: Path, cli) -> None:
    newer = copy_with(run, tmp_path, "summary", format_version=SUMMARY_FORMAT + 1)
    for folder in (run.samples, run.chronicle):
        (newer.root / folder.name).mkdir()
        for shard in folder.iterdir():
            (newer.root / folder.name / shard.name).write_bytes(shard.read_bytes())
    code, _, err = cli("report", str(newer.root))
    assert code == 2 and len(err.strip().splitlines()) == 1 and "summary.json" in err and "format_version" in err, err
    assert not newer.report.exists()


def test_a_moved_run_reads_its_config_where_it_is_now(run: RunDir, tmp_path: Path) -> None:
    moved = copy_with(run, tmp_path, "config")
    config = stored_config(moved.root)
    assert config.out == moved.root and config.memory_path == moved.memory, "not the directory it was written in"
