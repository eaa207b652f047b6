"""The benchmark scripts keep running against the current library (their figures are not asserted; seed_table.py
runs end to end in tests/test_seed_table.py)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import REPO


def _run(script: str, *args: str) -> dict:
    done = subprocess.run(
        [sys.executable, f"benchmarks/{script}", "--json", "--no-save", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_society_benchmark_reports_its_figures():
    result = _run("society.py", "--rounds", "2", "--repeats", "1", "--overhead-repeats", "1")
    assert result["turns_per_s_offline"] > 0 and result["overhead_ms_per_turn"] > 0


@pytest.mark.slow
def test_memory_benchmark_reports_its_figures():
    result = _run("memory.py", "--quick", "--sizes", "600", "--pool", "120", "--write-rounds", "3", "--queries", "10")
    assert result["write_ratio"] > 0 and set(result["recall_p50_ms"]) == set(result["recall_p99_ms"])


@pytest.mark.slow
def test_data_engine_benchmark_reports_its_figures():
    result = _run("data_engine.py", "--scenario", "trio", "--rounds", "1", "--societies", "1,2")
    assert set(result["samples_per_s"]) == {"1", "2"} and min(result["samples_per_s"].values()) > 0
    assert set(result["wall_share"]) == {"policy", "memory", "graph"}
    assert abs(sum(result["wall_share"].values()) - 1) < 0.01
    assert result["peak_rss_mb"] > 0 and result["hours_to_33550336"] > 0


@pytest.mark.slow
def test_cluster_benchmark_reports_its_figures():
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'amphoreus-graph[ray]')")
    result = _run("cluster.py", "--nodes", "1", "--societies", "1", "--scenario", "trio", "--rounds", "2")
    run = result["runs"]["1"]
    assert run["end_to_end_samples_per_s"] > 0 and run["nodes_used"] == 1 and run["samples"] == 2 * 3
    assert result["steady_samples_per_s"]["1"] >= 0  # 0 when every sample landed between two polls


@pytest.mark.slow
def test_report_benchmark_reports_its_figures():
    result = _run("report.py", "--cycles", "1", "--rounds", "2", "--opens", "1")
    assert result["turns"] == 24 and 0 < result["size_mb"] < 5
    assert result["open_ms_median"] is None or result["open_ms_median"] > 0


@pytest.mark.slow
def test_models_benchmark_reports_its_figures():
    pytest.importorskip("langchain_openai")
    result = _run("models.py", "--quick", "--latency", "0.2")
    assert result["round"]["gateway"]["ratio"] > 0 and result["round"]["society_null_memory"]["rounds"] == 2
    assert result["round"]["society_null_memory"]["requests_by_role"] == {"decide": 24}
    crowd = result["crowd"]
    assert crowd["agents"] == 24 and crowd["waves"] == 3 and crowd["requests_by_role"]["decide"] == 48
    assert crowd["waves_ratio"] >= 1.0, "a round cannot take less than its waves of model latency"
    shared = result["societies"]
    assert 0 < shared["peak_in_flight"] <= shared["limit"], "the endpoint's limiter holds its limit"
    assert result["cache"]["entries"] == result["cache"]["calls"] and result["cache"]["hit_ms_p50"] > 0


def test_chroma_writes_benchmark_reports_its_figures():
    result = _run("chroma_writes.py", "--collections", "2", "--rounds", "10", "--thresholds", "0", "10")
    assert [row["sync_threshold"] for row in result["thresholds"]] == ["default (1000)", 10]
    assert all(row["first_tenth_ms"] > 0 and row["total_s"] >= 0 for row in result["thresholds"])


def test_latency_benchmark_counts_the_checkpoints_written_behind_the_rounds():
    """At L = 0 the figure is the sustained round (to the run's return, every checkpoint written), which can never
    be shorter than the mean round between round ends; each variant is also set beside raw LangGraph on this
    project's checkpointer."""
    variants = ("raw_langgraph", "raw_run_checkpointer", "framework")
    result = _run("latency.py", "--latencies", "0", "--rounds", "4", "--repeats", "1", "--variants", *variants)
    rows = result["latencies"]["0.0"]
    for row in rows.values():
        (run,) = row["repeats"]
        assert run["sustained_round_s"] >= run["mean_wall_s"] > 0
    assert rows["raw_langgraph"]["times_raw_langgraph"] == 1.0 and rows["framework"]["times_raw_langgraph"] > 0
    assert rows["raw_run_checkpointer"]["times_raw_run_checkpointer"] == 1.0
    assert rows["framework"]["times_raw_run_checkpointer"] > 0


def test_embedder_benchmark_times_int8_on_one_thread_and_over_its_lanes():
    """`--lanes` sets the batch of 12 in a row on one thread beside the same batch over the lanes; int8 only."""
    result = _run("embedder.py", "--quick", "--lanes")
    if not result["int8_in_use"]:  # the probe check kept fp32: no lanes to time
        assert "lanes" not in result
        return
    lanes = result["lanes"]
    assert lanes["cores"] >= 1 and lanes["in_a_row_ms_p50"] > 0 and lanes["lanes_ms_p50"] > 0
    assert abs(lanes["speedup"] - lanes["in_a_row_ms_p50"] / lanes["lanes_ms_p50"]) < 0.01


def test_round_trace_reads_each_rounds_critical_path():
    """Every steady round is found between two game masters, and its parts fit inside it: the next round's first
    request comes after the recall it needs, and a round lasts at least the model's latency."""
    result = _run("round_trace.py", "--latency", "0.1", "--rounds", "5", "--thread-cpu")
    rounds = result["per_round"]
    assert len(rounds) == 4  # five game masters, four rounds between them
    for r in rounds:
        assert r["round_ms"] >= 100
        assert r["reply_to_gm"] >= 0 and r["request_spread"] >= 0
        assert r["gm_to_recall"] is not None and r["gm_to_first_request"] >= r["gm_to_recall"]
        assert r["embed_runs"] == 0 or r["embed_wall"] > 0
        if r["embed_runs"]:  # the window's three parts, in order, add up to it
            parts = r["to_first_run"] + r["runs_span"] + r["rank_ms"]
            assert min(r["to_first_run"], r["rank_ms"]) >= 0 and r["runs_span"] > 0
            assert abs(parts - r["gm_to_recall"]) < 0.05  # each figure rounded to 0.01 ms
    assert result["median"]["round_ms"] >= 100
    if sys.platform == "linux":  # per-thread counters from /proc: the recall windows' CPU, by thread
        assert result["recall_window_cpu_ms_by_thread"]
