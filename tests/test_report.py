"""`amphoreus report`: a short real run (trio, 2 cycles) and a real leaderboard, rendered to one HTML page."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import escape

from amphoreus_graph.catalogs.scenario import scenario_of
from amphoreus_graph.society.chronicle import iter_chronicle
from amphoreus_graph.society.samples import read_samples
from tests.test_toy_world import DEFAULT_WORLD, TOY

SECTIONS = ("overview", "timeline", "trust", "alignment", "memory", "samples", "leaderboard", "transcript")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


class Page(HTMLParser):
    """Collects ids, the attributes that could fetch something, and the turns of the transcript."""

    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.references: list[str] = []
        self.turns: list[dict[str, str]] = []
        self.tags: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = {k: v or "" for k, v in attrs}
        self.tags.add(tag)
        if "id" in found:
            self.ids.add(found["id"])
        self.references += [found[k] for k in ("src", "href", "action", "srcset", "data") if k in found]
        if "turn" in found.get("class", "").split():
            self.turns.append(found)


@pytest.fixture(scope="module")
def run(tmp_path_factory, embedder) -> Path:
    """A finished 2-cycle trio run with a Path Emanator leaderboard written inside it."""
    import asyncio

    from amphoreus_graph.bench.leaderboard import run_leaderboard
    from amphoreus_graph.bench.tasks.base import BenchSettings
    from amphoreus_graph.society.runner import RunConfig, Simulation

    out = tmp_path_factory.mktemp("report") / "trio-run"
    asyncio.run(Simulation(RunConfig(scenario="trio", cycles=2, rounds=5, seed=3, out=out)).run())
    asyncio.run(run_leaderboard(["random", "offline"], ["path_choice"], BenchSettings(), out / "bench"))
    return out


@pytest.fixture(scope="module")
def page(run: Path) -> tuple[str, Page]:
    from typer.testing import CliRunner

    from amphoreus_graph.cli import app

    result = CliRunner().invoke(app, ["report", str(run)])
    assert result.exit_code == 0, result.output
    html = (run / "report.html").read_text(encoding="utf-8")
    parsed = Page()
    parsed.feed(html)
    return html, parsed


def test_report_has_every_section_and_every_turn(run: Path, page: tuple[str, Page]) -> None:
    html, parsed = page
    assert set(SECTIONS) <= parsed.ids
    samples = read_samples(run / "samples")
    assert len(parsed.turns) == len(samples)
    assert {(t["data-agent"], t["data-cycle"]) for t in parsed.turns} == {(s.agent, str(s.cycle)) for s in samples}
    recalled = [m.text for s in samples if s.context for m in s.context.memories]
    assert recalled and all(escape(text) in html for text in recalled[:20]), "recalled memories are shown per turn"
    summary = json.loads((run / "summary.json").read_text())
    assert sum(summary["tally_per_agent"].values()) > 0, "the run should score, or the marks below prove nothing"
    assert html.count('class="scored"') == _score_rises(run), "one ★ per round in which an agent's score rose"
    assert html.count("<svg") >= 2 + len(summary["cycles"]), "a trust network per cycle plus the bar charts"
    board = json.loads((run / "bench" / "leaderboard.json").read_text())
    assert all(row["model"] in html for row in board["models"])


def _score_rises(run: Path) -> int:
    """(round, agent) pairs whose score the chronicle shows above the round before (or the cycle's start)."""
    world = scenario_of("trio").world
    rises, before = 0, {}
    for record in iter_chronicle(run):
        if record.round == 1:
            before = world.view(world.genesis(record.cycle)).score
        rises += sum(score > before.get(agent, 0.0) for agent, score in record.world.score.items())
        before = record.world.score
    return rises


def test_report_speaks_in_its_worlds_words(run: Path, page: tuple[str, Page]) -> None:
    """Each cycle's outcome, closing words, score and facts; the world's gauges per round; the actions taken,
    each with a colour of its own; labels from the world."""
    html, _ = page
    summary = json.loads((run / "summary.json").read_text())
    labels = scenario_of("trio").world.labels
    for cycle in summary["cycles"]:
        assert escape(cycle["text"]) in html and cycle["outcome"].replace("_", " ") in html
    assert f"Most {labels.score}" in html and f"<th>{labels.agent.capitalize()}</th>" in html
    names = [name for name in summary["cycles"][0]["facts"] if name != "fallen"]
    assert names and all(f'<th class="num">{name.replace("_", " ").capitalize()}</th>' in html for name in names)
    for record in iter_chronicle(run):
        for gauge in record.world.gauges:
            assert f"<tr><th>{gauge.name}</th>" in html
    legend = re.findall(r'<span><i style="background:(hsl\([^)]*\))"></i>([^<]+)</span>', html)
    taken = {s.decision.action.replace("_", " ") for s in read_samples(run / "samples")}
    assert {name for _, name in legend} == taken and len({colour for colour, _ in legend}) == len(legend)


def test_a_report_of_another_world_names_nothing_of_the_default_one(tmp_path: Path, cli, embedder) -> None:
    import asyncio

    from amphoreus_graph.society.runner import RunConfig, Simulation

    out = tmp_path / "garden"
    asyncio.run(Simulation(RunConfig(scenario=TOY, cycles=1, rounds=3, seed=2, out=out)).run())
    code, _, err = cli("report", str(out), "--no-alignment")
    assert code == 0, err
    html = (out / "report.html").read_text(encoding="utf-8")
    assert "<tr><th>fruit on the tree</th>" in html and "Most fruits" in html and "Fruit left" in html
    assert "<th>Neighbour</th>" in html and "every neighbour" in html
    assert "Not computed (--no-alignment)" in html
    ours = html.replace("amphoreus-graph", "")  # the package's name (the page's generator) is not the world's
    assert not DEFAULT_WORLD.search(ours), DEFAULT_WORLD.findall(ours)


def test_report_references_nothing_outside_itself(page: tuple[str, Page]) -> None:
    html, parsed = page
    assert all(ref.startswith("#") for ref in parsed.references), parsed.references
    assert not {"link", "img", "iframe", "object", "embed"} & parsed.tags
    assert not re.search(r"https?://|url\(|@import|//[a-z0-9.-]+\.[a-z]{2,}/", html, re.IGNORECASE)


def test_a_run_that_lost_its_chronicle_is_refused_in_one_line(run: Path, tmp_path: Path, cli) -> None:
    """Every run writes its chronicle beside its samples: without it the report would draw rounds it cannot know."""
    damaged = tmp_path / run.name
    shutil.copytree(run, damaged, ignore=shutil.ignore_patterns("chronicle", "memory", "report.html"))
    code, _, err = cli("report", str(damaged), "--no-alignment")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "chronicle: no rounds recorded" in err, err
    assert not (damaged / "report.html").exists()


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({}, "config.json: no such file"),
        ({"config.json": "{}", "summary.json": "[1]"}, "summary.json: a JSON list; expected a finished run"),
        ({"config.json": '{"cycles": "many"}'}, "config.json: cycles: Input should be a valid integer"),
    ],
)
def test_bad_run_directories_are_one_line(tmp_path: Path, cli, files: dict[str, str], message: str) -> None:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, _, err = cli("report", str(tmp_path))
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_bad_leaderboard_is_one_line_and_writes_nothing(run: Path, page, tmp_path: Path, cli) -> None:
    board = tmp_path / "leaderboard.json"
    board.write_text(json.dumps({"models": [{"model": "x", "ci": [0, 1]}], "tasks": []}))
    before = (run / "report.html").stat().st_mtime_ns
    code, _, err = cli("report", str(run), "--bench", str(board), "--no-alignment")
    assert code == 2 and "models[0].pes_score: Field required" in err
    assert (run / "report.html").stat().st_mtime_ns == before


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it when it can)")
def test_report_opens_in_headless_chromium_without_console_errors(run: Path, page: tuple[str, Page]) -> None:
    from playwright.sync_api import sync_playwright

    _, parsed = page
    problems: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        tab = browser.new_page()
        tab.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
        tab.on("pageerror", lambda e: problems.append(str(e)))
        tab.on("request", lambda r: problems.append(r.url) if not r.url.startswith("file://") else None)
        tab.goto((run / "report.html").as_uri(), wait_until="load")
        total = len(parsed.turns)
        assert tab.inner_text("#shown") == f"{total} of {total} turns"
        agent = parsed.turns[0]["data-agent"]
        tab.select_option("#agent", agent)
        mine = sum(t["data-agent"] == agent for t in parsed.turns)
        assert tab.inner_text("#shown") == f"{mine} of {total} turns"
        assert tab.locator(".turn:not(.hidden)").count() == mine
        tab.fill("#q", "nobody ever said this zqxj")
        assert tab.inner_text("#shown") == f"0 of {total} turns"
        browser.close()
    assert problems == []


def test_a_scepter_run_points_at_its_societies(tmp_path: Path, cli) -> None:
    from amphoreus_graph.scepter.plan import ScepterConfig
    from amphoreus_graph.society.runner import RunConfig

    ScepterConfig(societies=3, template=RunConfig(out=tmp_path / "many")).save()
    code, _, err = cli("report", str(tmp_path / "many"))
    assert code == 2 and "a Scepter run of 3 societies" in err and "many/societies/many-s000" in err


def test_a_run_still_going_or_made_in_studio_is_shown_as_far_as_its_chronicle_goes(run: Path, tmp_path: Path) -> None:
    """No summary.json (the run is still going) and no config.json (a Studio thread of an earlier version wrote
    neither): the chronicle says which scenario it is and how far each cycle got."""
    from amphoreus_graph.report import load_run

    going = tmp_path / "going"
    shutil.copytree(run, going, ignore=shutil.ignore_patterns("summary.json", "config.json", "memory", "bench"))
    shard = going / "chronicle" / "cycle-0002.jsonl"
    shard.write_text(shard.read_text().splitlines(keepends=True)[0])
    report = load_run(going, judge_alignment=False)
    summary = json.loads((run / "summary.json").read_text())
    assert report.scenario == "trio" and report.seed == 3
    first, second = report.cycles
    assert (first.outcome, first.rounds) == (summary["cycles"][0]["outcome"], summary["cycles"][0]["rounds"])
    assert first.tally == summary["cycles"][0]["tally"]
    assert (second.outcome, second.rounds) == ("in progress", 1)
    assert report.memory is None and "no config.json" in report.memory_note
