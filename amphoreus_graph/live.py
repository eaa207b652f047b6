"""`amphoreus simulate --live`: a terminal dashboard fed by the run's own progress events.

It keeps no state of its own beyond what the events carry (`cycle_started`, `round_started`, `turn_done`,
`round_done`, `cycle_done`, `reflected`), so it shows exactly what the graph streamed, in Studio or here. What
it shows of the world is the world's own `WorldView` (its gauges, objectives and agent columns) and labels, so
the same dashboard serves every world.
"""

from __future__ import annotations

from collections import Counter, deque

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.contracts.events import (
    CycleDone,
    CycleStarted,
    ProgressEvent,
    Reflected,
    RoundDone,
    RoundStarted,
    TurnDone,
)
from amphoreus_graph.contracts.world import Gauge, WorldView

RECENT = 6
WIDEST = 18  # the widest a name, place or world column grows: the last action keeps room on narrow terminals


def number(value: float) -> str:
    """A gauge reading as people write it: whole numbers without a point, others to one decimal."""
    return f"{value:.0f}" if float(value).is_integer() else f"{value:.1f}"


def gauge_label(gauge: Gauge) -> str:
    """'Fog 3/12': the reading against the top of its range."""
    return f"{gauge.name} {number(gauge.value)}/{number(gauge.high)}"


class LiveDashboard:
    """The current round, the world's gauges and objectives, and each agent's Path, place, own columns and
    last action, with what just happened."""

    view: WorldView
    last: dict[str, str]
    flags: dict[str, list[str]]

    def __init__(self, scenario: Scenario, *, cycles: int, rounds: int, run: str) -> None:
        self.scenario = scenario
        self.cycles, self.rounds, self.run = cycles, rounds, run
        self.cycle, self.round, self.turns_done = 0, 0, 0
        self.recent: deque[str] = deque(maxlen=RECENT)
        self.models: dict[str, dict[str, int]] = {}
        self._reset_world()

    def _reset_world(self) -> None:
        """The world as a cycle starts (its genesis, as the world shows it), until `round_done` says more."""
        world = self.scenario.world
        self.view = world.view(world.genesis(max(self.cycle, 1)))
        self.last, self.flags = {}, {}

    def update(self, event: ProgressEvent) -> None:
        """Fold one progress event into the view."""
        match event:
            case CycleStarted():
                self.cycle, self.round = event.cycle, 0
                self._reset_world()
                self.recent.append(f"cycle {self.cycle} begins: the world is remade")
            case RoundStarted():
                self.cycle, self.round, self.turns_done = event.cycle, event.round, 0
            case TurnDone():
                self.turns_done += 1
                target = event.target
                self.last[event.agent] = event.action.replace("_", " ") + (f" → {target}" if target else "")
                self.flags[event.agent] = list(event.flags)
            case RoundDone():
                self.view = WorldView.model_validate(event.view)
                self.models = dict(event.models)
            case CycleDone():
                outcome = event.outcome.replace("_", " ")
                self.recent.append(f"cycle {event.cycle} ended ({outcome}): {event.text}")
            case Reflected():
                self.recent.append(event.text)  # reflections already begin "<agent> reflects:"

    def _head(self) -> RenderableType:
        """Where the run is, how the world's objectives stand, and each gauge as a bar in its own range."""
        labels = self.scenario.world.labels
        status = Text.assemble(
            (self.scenario.title, "bold"),
            f"  ·  cycle {self.cycle}/{self.cycles}  ·  round {self.round}/{self.rounds}",
            f"  ·  turns {self.turns_done}/{len(self.scenario.agents)}",
        )
        if self.view.objectives:
            counts = Counter(self.view.objectives.values())
            status.append(f"  ·  {labels.objectives}: " + ", ".join(f"{n} {s}" for s, n in counts.items()))
        if self.models:
            calls = ", ".join(
                f"{role} {use['calls']}"
                + (f" ({use['failed']} failed, {use['fallbacks']} fell back)" if use["failed"] else "")
                for role, use in self.models.items()
            )
            status.append(f"\nmodel calls: {calls}", style="dim")
        bars = Table.grid(padding=(0, 1))
        for gauge in self.view.gauges:
            span = max(gauge.high - gauge.low, 0.0)
            filled = min(max(gauge.value - gauge.low, 0.0), span)
            bars.add_row(
                Text(gauge_label(gauge), style="bold blue"),
                ProgressBar(total=span or 1.0, completed=filled, width=40, complete_style="blue"),
            )
        return Group(status, bars)

    def _agents(self) -> Table:
        """One row per agent: Path, place, the world's own columns (whatever its view puts there), last action."""
        views = self.view.agents
        columns = list(dict.fromkeys(field for agent in views.values() for field in agent.fields))
        table = Table(expand=True, show_edge=False, pad_edge=False)
        for column in (self.scenario.world.labels.agent.capitalize(), "Path", "Where", *columns):
            table.add_column(column, no_wrap=True, overflow="ellipsis", max_width=WIDEST)
        table.add_column("Last action", no_wrap=True, overflow="ellipsis")
        for agent in self.scenario.agents:
            seen = views.get(agent.name)
            active = seen is None or seen.active
            flags = self.flags.get(agent.name, [])
            action = Text(self.last.get(agent.name, "…"), style="red" if "fallback" in flags else "")
            if flags:
                action.append(f"  [{', '.join(flags)}]", style="dim")
            fields = seen.fields if seen is not None else {}
            name = Text(agent.name, style="bold") if active else Text.assemble((agent.name, "dim strike"), " fallen")
            table.add_row(
                name,
                agent.path,
                (seen.location if seen is not None else None) or "–",
                *[fields.get(column) or Text("–", style="dim") for column in columns],
                action,
            )
        return table

    def render(self) -> RenderableType:
        recent = [Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in self.recent] or [Text("…")]
        lately = Panel(Group(*recent), title="lately", title_align="left")
        return Panel(Group(self._head(), self._agents(), lately), title=f"run {self.run}")
