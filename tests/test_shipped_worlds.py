"""Each shipped world other than the default runs through the whole pipeline, and nothing it produces (samples,
chronicle, summary, report, judged output) names a concept of the default world."""

from __future__ import annotations

import pytest

from tests.test_toy_world import DEFAULT_WORLD


@pytest.mark.parametrize("world", ["fair", "fishery"])
def test_a_shipped_world_says_nothing_of_the_default_world_anywhere(world, cli, tmp_path):
    run = tmp_path / world
    code, out, err = cli(
        "simulate", "--scenario", world, "--cycles", "2", "--rounds", "4", "--out", str(run), "--quiet"
    )  # fmt: skip
    assert code == 0, out + err
    code, out, err = cli("judge", str(run), "--max-turns", "6", "-k", "2")
    assert code == 0, out + err
    code, out, err = cli("report", str(run))
    assert code == 0, out + err
    written = [
        *run.glob("samples/*.jsonl"),
        *run.glob("chronicle/*.jsonl"),
        run / "summary.json",
        run / "report.html",
        *run.glob("judged/*"),
    ]
    assert len(written) >= 8
    for path in written:
        found = DEFAULT_WORLD.findall(path.read_text(encoding="utf-8"))
        assert not found, f"{path.relative_to(run)}: {sorted(set(found))}"
