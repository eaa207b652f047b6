"""Render a RunReport into one self-contained HTML file: inline CSS, SVG and script, no network at all."""

from __future__ import annotations

from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape

from amphoreus_graph.atomic import write_atomic
from amphoreus_graph.report.charts import ACTION_COLOURS, grouped_bars, heat, path_colour, trust_network
from amphoreus_graph.report.model import RunReport, Turn

REPORT_FILE = "report.html"


def turn_id(turn: Turn) -> str:
    return f"t-c{turn.cycle}-r{turn.round}-{turn.heir}".replace(" ", "_")


def short_action(action: str) -> str:
    return action.replace("_coreflame", "").replace("fight_tide", "tide").replace("_", " ")


def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("amphoreus_graph.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["path_colour"] = path_colour
    env.filters["short_action"] = short_action
    env.globals.update(heat=heat, turn_id=turn_id, action_colours={str(a): c for a, c in ACTION_COLOURS.items()})
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
    return (
        _environment()
        .get_template("report.html.j2")
        .render(
            r=report,
            turns_total=sum(c.samples for c in report.cycles),
            trust_svgs=[trust_network(c.trust, report.heirs) for c in report.cycles],
            memory_chart=memory_chart,
            samples_chart=samples_chart,
        )
    )


def write_report(report: RunReport, run: Path) -> Path:
    target = run / REPORT_FILE
    write_atomic(target, render_report(report))
    return target
