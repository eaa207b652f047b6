"""Report benchmark: the default 2-cycle run's report — how long it takes to build, how big it is, how fast it opens.

The issue's bar: the report of the default run (`make run`: amphoreus, 2 cycles × 12 rounds, offline, seed 7)
opens in under 2 s and is under 5 MB. "Opens" is measured in headless Chromium as the navigation's load event
plus the transcript filter's first pass (the page is usable then), median over `--opens` fresh tabs.

    python benchmarks/report.py [--json] [--run RUN] [--opens 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_common import publish, results_options, versions

from amphoreus_graph.layout import RunDir
from amphoreus_graph.report import load_run, write_report
from amphoreus_graph.society.runner import RunConfig, Simulation

RESULTS = Path(__file__).resolve().parent / "results" / "report.json"
OPENED = "performance.getEntriesByType('navigation')[0].loadEventEnd"


def default_run(out: Path, cycles: int, rounds: int) -> Path:
    """The run `make run` makes (same scenario, cycles, rounds, model and seed)."""
    config = RunConfig(scenario="amphoreus", cycles=cycles, rounds=rounds, model="offline", seed=7, out=out)
    asyncio.run(Simulation(config).run())
    return out


def open_times(page: Path, opens: int) -> list[float] | None:
    """Milliseconds from navigation to a usable page, per fresh tab; None without Chromium."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        return None
    from playwright.sync_api import sync_playwright

    times = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=["--no-sandbox", "--disable-gpu"])
        for _ in range(opens):
            tab = browser.new_page()
            tab.goto(page.as_uri(), wait_until="load")
            tab.wait_for_function("document.getElementById('shown').textContent.length > 0")
            times.append(float(tab.evaluate(OPENED)))
            tab.close()
        browser.close()
    return times


def benchmark(args: argparse.Namespace) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as scratch:
        run = args.run or default_run(Path(scratch) / "default-run", args.cycles, args.rounds)
        started = time.perf_counter()
        report = load_run(run)
        loaded = time.perf_counter()
        page = write_report(report, RunDir(run).report)
        rendered = time.perf_counter()
        times = open_times(page, args.opens)
        size = page.stat().st_size
    return {
        "run": "given" if args.run else f"amphoreus, {args.cycles} cycles x {args.rounds} rounds, offline, seed 7",
        "turns": sum(c.samples for c in report.cycles),
        "load_s": round(loaded - started, 2),
        "render_s": round(rendered - loaded, 3),
        "size_mb": round(size / 1e6, 3),
        "open_ms_median": round(statistics.median(times), 1) if times else None,
        "open_ms_max": round(max(times), 1) if times else None,
        "under_2s_and_5mb": bool(times) and max(times or [0]) < 2000 and size < 5e6,
        "versions": versions(("jinja2", "playwright", "chromadb", "sentence-transformers")),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a summary")
    parser.add_argument("--run", type=Path, help="report this run instead of making the default one")
    parser.add_argument("--cycles", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--opens", type=int, default=5, help="fresh tabs to time")
    results_options(parser, RESULTS)
    args = parser.parse_args(argv)
    result = benchmark(args)
    opened = "no Chromium here" if result["open_ms_median"] is None else f"{result['open_ms_median']} ms median"
    text = (
        f"{result['turns']} turns: read in {result['load_s']} s, rendered in {result['render_s']} s, "
        f"{result['size_mb']} MB, opens in {opened} (max {result['open_ms_max']} ms)"
    )
    publish(result, text, path=args.results, save=not args.no_save, as_json=args.json)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
