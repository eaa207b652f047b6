"""Random damage to run directories: every case must end byte-identical after resume, or in a one-line refusal
that changed nothing (tests/damage_cases.py says what each damage is and how an outcome is judged).

    .venv/bin/python benchmarks/damage.py                    # 300 cases, a table by kind and outcome
    .venv/bin/python benchmarks/damage.py --cases 40 --jobs 2
    .venv/bin/python benchmarks/damage.py --json             # one JSON object on stdout

The JSON also goes to benchmarks/results/damage.json, with every case that was not identical or refused.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the cases live beside the tests

from bench_common import environment, publish

from tests.damage_cases import GOOD, KINDS, prepare, run_case

RESULTS = Path(__file__).resolve().parent / "results" / "damage.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--first-seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="cases resumed at once (each in its own process)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--no-save", action="store_true", help="print only; leave benchmarks/results/ as it is")
    args = parser.parse_args()
    load_before = os.getloadavg()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="amphoreus-damage-") as folder:
        reference = prepare(Path(folder) / "reference")
        seeds = range(args.first_seed, args.first_seed + args.cases)
        with ThreadPoolExecutor(args.jobs) as pool:
            cases = list(pool.map(lambda seed: run_case(seed, reference, Path(folder)), seeds))
    tally: dict[str, Counter[str]] = {kind: Counter() for kind in KINDS}
    for case in cases:
        tally[case["kind"]][case["outcome"]] += 1
    report: dict[str, Any] = {
        "cases": len(cases),
        "outcomes": dict(Counter(case["outcome"] for case in cases)),
        "by_kind": {kind: dict(counts) for kind, counts in tally.items()},
        "failures": [case for case in cases if case["outcome"] not in GOOD],
        "refusals": [f"{case['kind']}: {case['detail']}" for case in cases if case["outcome"] == "refused"],
        "wall_s": round(time.perf_counter() - started, 1),
        "environment": environment(("chromadb", "langgraph"), load_before),
    }
    publish(report, _table(report), path=RESULTS, save=not args.no_save, as_json=args.json)


def _table(report: dict[str, Any]) -> str:
    lines = [f"{report['cases']} damages in {report['wall_s']} s: {report['outcomes']}"]
    for kind, counts in report["by_kind"].items():
        lines.append(f"  {kind:14} {counts}")
    for case in report["failures"]:
        what = f"seed {case['seed']} {case['kind']} ({case['damage']})"
        lines.append(f"  FAILED {what}: {case['outcome']}: {case['detail']}")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
