"""`amphoreus export sft`: filters, deduplication, the dataset card, and `datasets.load_dataset`."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from amphoreus_graph.data.export import SftFilters, export_sft
from amphoreus_graph.memory.store import NullMemory
from amphoreus_graph.policy.registry import resolve_model
from amphoreus_graph.society.guard import Limits
from amphoreus_graph.society.runner import RunConfig, Simulation


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Two small runs: an offline one, and one with a faulty scripted model (some fallbacks)."""
    import asyncio

    root = tmp_path_factory.mktemp("export")
    offline = Simulation(RunConfig(scenario="trio", cycles=2, seed=5, out=root / "offline"), memory=NullMemory())
    faulty = Simulation(
        RunConfig(scenario="trio", cycles=2, seed=5, out=root / "faulty", limits=Limits(max_fallback_rate=1.0)),
        policy=resolve_model("scripted:fail=0.6,malformed=0.3,seed=2"),
        memory=NullMemory(),
    )
    asyncio.run(offline.run())
    asyncio.run(faulty.run())
    return root / "offline", root / "faulty"


def _rows(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_export_writes_chat_rows_with_metadata_and_a_card(runs, tmp_path):
    offline, _ = runs
    report = export_sft([offline], tmp_path / "sft")
    rows = _rows(tmp_path / "sft" / "train.jsonl")
    assert report.rows == len(rows) == report.read - report.exact_duplicates - report.near_duplicates
    assert report.read == 24
    for row in rows:
        assert [m["role"] for m in row["messages"]] == ["system", "user", "assistant"]
        assert json.loads(row["messages"][-1]["content"])["action"] == row["action"]
        assert {"run", "world", "cycle", "round", "agent", "path", "flags", "model"} <= set(row)
    assert {row["world"] for row in rows} == {"trio"}
    card = (tmp_path / "sft" / "README.md").read_text()
    assert "Rows per Path" in card and "Remembrance" in card and '"scenario": "trio"' in card
    assert f"## Rows per world\n\n- trio: {len(rows)}\n" in card


def test_filters_and_fallback_exclusion(runs, tmp_path):
    offline, faulty = runs
    only = export_sft([offline], tmp_path / "a", filters=SftFilters(paths=["Remembrance"], cycles=[2]))
    rows = _rows(tmp_path / "a" / "train.jsonl")
    assert only.rows == len(rows) > 0 and {(r["path"], r["cycle"]) for r in rows} == {("Remembrance", 2)}
    everything = export_sft([faulty], tmp_path / "b", filters=SftFilters(exclude_fallback=False))
    clean = export_sft([faulty], tmp_path / "c")  # a stand-in's decisions are left out unless asked for
    assert any("fallback" in r["flags"] for r in _rows(tmp_path / "b" / "train.jsonl"))
    assert clean.rows < everything.rows
    assert not any("fallback" in r["flags"] for r in _rows(tmp_path / "c" / "train.jsonl"))


def test_the_same_run_twice_is_deduplicated(runs, tmp_path):
    offline, _ = runs
    once = export_sft([offline], tmp_path / "once")
    twice = export_sft([offline, offline], tmp_path / "twice")
    assert twice.rows == once.rows and twice.exact_duplicates >= once.rows


def test_loads_with_datasets(runs, tmp_path, cli):
    datasets = pytest.importorskip("datasets", reason="the datasets package is part of the [dev] extra")
    offline, _ = runs
    code, _, err = cli("export", "sft", str(offline), "--out", str(tmp_path / "ds"), "--agent", "Cyrene")
    assert code == 0, err
    loaded = datasets.load_dataset("json", data_files=str(tmp_path / "ds" / "train.jsonl"), split="train")
    assert len(loaded) > 0 and set(loaded["agent"]) == {"Cyrene"} and set(loaded["world"]) == {"trio"}
    assert loaded[0]["messages"][-1]["role"] == "assistant"


def test_a_dataset_of_another_world_is_carded_in_its_own_words(tmp_path):
    """The toy garden (tests/worlds/toy): its rows say their world, and its card names no other world."""
    import asyncio

    toy = str(Path(__file__).parent / "worlds" / "toy" / "toy.yaml")
    run = tmp_path / "garden"
    asyncio.run(Simulation(RunConfig(scenario=toy, cycles=1, rounds=2, seed=3, out=run), memory=NullMemory()).run())
    report = export_sft([run], tmp_path / "sft")
    rows = _rows(tmp_path / "sft" / "train.jsonl")
    assert report.rows == len(rows) > 0 and {r["world"] for r in rows} == {"toy-garden"}
    assert {r["agent"] for r in rows} == {"Ada", "Bo", "Cy"}
    card = (tmp_path / "sft" / "README.md").read_text()
    assert card.startswith("# amphoreus-graph SFT dataset") and f"- toy-garden: {len(rows)}" in card
    assert not re.findall(r"Amphoreus|Coreflame|Titan|Black Tide|\b[Hh]eirs?\b", card), card


def test_a_missing_run_is_one_line(cli, tmp_path):
    code, _, err = cli("export", "sft", str(tmp_path / "nope"), "--out", str(tmp_path / "o"))
    assert code == 2 and "no such directory" in err and "Traceback" not in err


def test_parquet_output_loads_with_datasets(runs, tmp_path):
    datasets = pytest.importorskip("datasets", reason="the datasets package is part of the [dev] extra")
    offline, _ = runs
    report = export_sft([offline], tmp_path / "pq", fmt="parquet")
    loaded = datasets.load_dataset("parquet", data_files=str(tmp_path / "pq" / "train.parquet"), split="train")
    assert len(loaded) == report.rows and loaded[0]["messages"][0]["role"] == "system"
