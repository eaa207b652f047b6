"""Render a RunReport into one self-contained HTML file: inline CSS, SVG and script, no network at all."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.live import number
from amphoreus_graph.report.charts import action_colours, grouped_bars, heat, path_colours, trust_network
from amphoreus_graph.report.model import RunReport, Turn


def turn_id(turn: Turn) -> str:
    return f"t-c{turn.cycle}-r{turn.round}-{turn.agent}".replace(" ", "_")


def words(name: str) -> str:
    """An id as words: `round_limit` → `round limit`."""
    return name.replace("_", " ")


def upper_first(text: str) -> str:
    """A label at the start of a heading (Jinja's `capitalize` would lower the rest of it)."""
    return text[:1].upper() + text[1:]


def fact(value: object) -> str:
    """One of a world's own numbers for a cycle, as a table cell."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int | float):
        return number(value)
    if isinstance(value, list | tuple):
        return ", ".join(map(str, value)) or "–"
    return str(value)


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("amphoreus_graph.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(words=words, upper_first=upper_first, fact=fact, number=number)
    env.globals.update(heat=heat, turn_id=turn_id)
    return env


def render_report(report: RunReport) -> str:
    cycles = [f"cycle {c.cycle}" for c in report.cycles]
    memory_chart = grouped_bars(
        cycles,
        {
            "filed": [float(sum(c.written.values())) for c in report.cycles],
            "kept into the next cycle": [float(sum(c.memories_kept.values())) for c in report.cycles],
        },
        ["#7e3af2", "#0f766e"],
        label="memories filed and kept per cycle",
    )
    samples_chart = grouped_bars(
        cycles,
        {
            "samples": [float(c.samples) for c in report.cycles],
            "fallbacks": [float(c.fallbacks) for c in report.cycles],
            "repaired": [float(c.repaired) for c in report.cycles],
        },
        ["#3f83f8", "#e02424", "#e3a008"],
        label="samples and fallbacks per cycle",
    )
    colours = path_colours(report.paths)
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            r=report,
            path_colours=colours,
            action_colours=action_colours(report.actions),
            turns_total=sum(c.samples for c in report.cycles),
            trust_svgs=[trust_network(c.trust, report.agents, colours) for c in report.cycles],
            memory_chart=memory_chart,
            samples_chart=samples_chart,
        )
    )


def write_report(report: RunReport, target: Path) -> Path:
    """The page, written to `target` (a run's own is RUN/report.html)."""
    write_atomic(target, render_report(report))
    return target
