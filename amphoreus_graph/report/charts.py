"""Inline SVG and colours for the report: small, crisp at any zoom, no script or network needed to draw them.

Every function returns markup-safe text (labels are escaped here), sized by a viewBox so the page scales it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from html import escape

from markupsafe import Markup

GOLDEN_ANGLE = 137.508


def spread_colours(names: Iterable[str], *, saturation: int, lightness: int, start: float = 0.0) -> dict[str, str]:
    """A colour per name: hues spread round the wheel by the golden angle in the given order, so names listed
    together still look apart however many there are."""
    hues = {name: (start + i * GOLDEN_ANGLE) % 360 for i, name in enumerate(names)}
    return {name: f"hsl({hue:.0f} {saturation}% {lightness}%)" for name, hue in hues.items()}


def path_colours(paths: Iterable[str]) -> dict[str, str]:
    """A stable colour per Path, spread over its catalogue's order."""
    return spread_colours(paths, saturation=62, lightness=46)


def action_colours(actions: Iterable[str]) -> dict[str, str]:
    """A colour per action a run took, in its world's order: darker than the Paths' so white labels stay
    readable on it, and started half a turn round so an action and the first Paths do not share a hue."""
    return spread_colours(actions, saturation=58, lightness=38, start=180.0)


def heat(value: float, low: float, high: float) -> str:
    """Background colour for a heatmap cell: pale at `low`, deep teal at `high`."""
    share = 0.0 if high <= low else max(0.0, min(1.0, (value - low) / (high - low)))
    return f"hsl(174 {30 + 50 * share:.0f}% {92 - 52 * share:.0f}%)"


def trust_network(
    trust: dict[str, dict[str, float]], paths: dict[str, str], colours: dict[str, str], *, threshold: float = 0.15
) -> Markup:
    """Agents on a circle (coloured by Path); an edge where the two agents' mean trust passes ±threshold (green
    trust, red distrust, width by strength). Hovering an edge shows both directions."""
    names = list(paths)
    size, radius = 520, 190
    centre = size / 2
    spots = {
        n: (centre + radius * math.cos(2 * math.pi * i / len(names) - math.pi / 2),
            centre + radius * math.sin(2 * math.pi * i / len(names) - math.pi / 2))
        for i, n in enumerate(names)
    }  # fmt: skip
    edges = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ab, ba = trust.get(a, {}).get(b, 0.0), trust.get(b, {}).get(a, 0.0)
            mean = (ab + ba) / 2
            if abs(mean) < threshold:
                continue
            (x1, y1), (x2, y2) = spots[a], spots[b]
            colour = "#0e9f6e" if mean > 0 else "#e02424"
            tip = f"{a} → {b}: {ab:+.2f} · {b} → {a}: {ba:+.2f}"
            edges.append(
                f'<line x1="{x1:.1f}" y1="{y1:.1f}" x2="{x2:.1f}" y2="{y2:.1f}" stroke="{colour}" '
                f'stroke-width="{1 + 6 * abs(mean):.1f}" stroke-opacity="0.7"><title>{escape(tip)}</title></line>'
            )
    nodes = []
    for name, (x, y) in spots.items():
        anchor = "start" if x > centre + 1 else "end" if x < centre - 1 else "middle"
        dx = 14 if anchor == "start" else -14 if anchor == "end" else 0
        dy = -14 if y < centre and anchor == "middle" else 18 if anchor == "middle" else 4
        nodes.append(
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="9" fill="{colours[paths[name]]}">'
            f"<title>{escape(name)} ({escape(paths[name])})</title></circle>"
            f'<text x="{x + dx:.1f}" y="{y + dy:.1f}" text-anchor="{anchor}">{escape(name)}</text>'
        )
    body = "".join(edges) + "".join(nodes)
    return Markup(
        f'<svg class="chart trust" viewBox="-90 0 {size + 180} {size}" role="img" '
        f'aria-label="trust network">{body}</svg>'
    )


def grouped_bars(categories: list[str], series: dict[str, list[float]], colours: list[str], *, label: str) -> Markup:
    """Grouped bars (one group per category, one bar per series) with a value axis and a legend."""
    width, height, left, bottom, top = 560, 240, 44, 28, 26
    peak = max([v for values in series.values() for v in values] + [1.0])
    step = 10 ** math.floor(math.log10(peak))
    top_tick = math.ceil(peak / step) * step
    plot_w, plot_h = width - left - 10, height - bottom - top
    group_w = plot_w / max(1, len(categories))
    bar_w = group_w * 0.8 / max(1, len(series))
    parts = []
    for tick in (0, top_tick / 2, top_tick):
        y = top + plot_h * (1 - tick / top_tick)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" class="grid"/>')
        parts.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for c, category in enumerate(categories):
        x0 = left + c * group_w + group_w * 0.1
        for s, (name, values) in enumerate(series.items()):
            value = values[c]
            h = plot_h * value / top_tick
            x = x0 + s * bar_w
            parts.append(
                f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bar_w * 0.92:.1f}" height="{h:.1f}" '
                f'fill="{colours[s]}"><title>{escape(category)} · {escape(name)}: {value:g}</title></rect>'
            )
        parts.append(
            f'<text x="{x0 + group_w * 0.4:.1f}" y="{height - 8}" text-anchor="middle">{escape(category)}</text>'
        )
    for s, name in enumerate(series):
        x = left + s * 150
        parts.append(f'<rect x="{x}" y="4" width="12" height="12" fill="{colours[s]}"/>')
        parts.append(f'<text x="{x + 16}" y="14">{escape(name)}</text>')
    return Markup(
        f'<svg class="chart bars" viewBox="0 0 {width} {height}" role="img" aria-label="{escape(label)}">'
        + "".join(parts)
        + "</svg>"
    )
