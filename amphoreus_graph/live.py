"""`amphoreus simulate --live`: a terminal dashboard fed by the run's own progress events.

It keeps no state of its own beyond what the events carry (`cycle_started`, `round_started`, `turn_done`,
`round_done`, `cycle_done`, `reflected`), so it shows exactly what the graph streamed, in Studio or here.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.progress_bar import ProgressBar
from rich.table import Table
from rich.text import Text

from amphoreus_graph.catalogs.scenario import Scenario
from amphoreus_graph.society.world import World

RECENT = 6


class LiveDashboard:
    """The current round, each heir's last action, Coreflames held, the Black Tide and what just happened."""

    heirs: dict[str, dict[str, Any]]
    last: dict[str, str]
    flags: dict[str, list[str]]
    black_tide: float
    delivered: int

    def __init__(self, scenario: Scenario, *, cycles: int, rounds: int, run: str) -> None:
        self.scenario = scenario
        self.cycles, self.rounds, self.run = cycles, rounds, run
        self.cycle, self.round, self.turns_done = 0, 0, 0
        self.recent: deque[str] = deque(maxlen=RECENT)
        self._reset_world()

    def _reset_world(self) -> None:
        """The world as a cycle starts (the scenario's genesis), heirs as `round_done` sends them."""
        world = World.genesis(self.scenario, self.cycle)
        self.heirs = {name: heir.model_dump(mode="json") for name, heir in world.heirs.items()}
        self.last, self.flags = {}, {}
        self.black_tide, self.delivered = world.black_tide, len(world.delivered)

    def update(self, event: dict[str, Any]) -> None:
        """Fold one progress event into the view."""
        kind = event.get("type")
        if kind == "cycle_started":
            self.cycle, self.round = event["cycle"], 0
            self._reset_world()
            self.recent.append(f"cycle {self.cycle} begins: the world is remade")
        elif kind == "round_started":
            self.cycle, self.round, self.turns_done = event["cycle"], event["round"], 0
        elif kind == "turn_done":
            self.turns_done += 1
            target = event.get("target")
            self.last[event["heir"]] = event["action"].replace("_", " ") + (f" → {target}" if target else "")
            self.flags[event["heir"]] = list(event.get("flags") or [])
        elif kind == "round_done":
            self.black_tide, self.delivered = event["black_tide"], event["delivered"]
            self.heirs.update(event.get("heirs") or {})
        elif kind == "cycle_done":
            outcome = str(event["outcome"]).replace("_", " ")
            self.recent.append(f"cycle {event['cycle']} ended: {outcome}, {event['coreflames_delivered']} delivered")
        elif kind == "reflected":
            self.recent.append(str(event["text"]))  # reflections already begin "<heir> reflects:"

    def render(self) -> RenderableType:
        tide = self.scenario.black_tide.limit
        status = Text.assemble(
            (self.scenario.title, "bold"),
            f"  ·  cycle {self.cycle}/{self.cycles}  ·  round {self.round}/{self.rounds}",
            f"  ·  turns {self.turns_done}/{len(self.scenario.heirs)}",
            f"  ·  Coreflames delivered {self.delivered}/{len(self.scenario.titans)}",
        )
        bar = Table.grid(padding=(0, 1))
        bar.add_row(
            Text(f"Black Tide {self.black_tide:.0f}/{tide:.0f}", style="bold blue"),
            ProgressBar(total=tide, completed=min(self.black_tide, tide), width=40, complete_style="blue"),
        )
        head = Group(status, bar)
        heirs = Table(expand=True, show_edge=False, pad_edge=False)
        for column in ("Heir", "Path", "Where", "HP", "Coreflames"):
            heirs.add_column(column, no_wrap=True, overflow="ellipsis")
        heirs.add_column("Last action", ratio=1, no_wrap=True, overflow="ellipsis")
        for heir in self.scenario.heirs:
            state = self.heirs[heir.name]
            flags = self.flags.get(heir.name, [])
            action = Text(self.last.get(heir.name, "…"), style="red" if "fallback" in flags else "")
            if flags:
                action.append(f"  [{', '.join(flags)}]", style="dim")
            coreflames = Text(", ".join(state["holding"]), style="yellow")
            if state["delivered"]:
                coreflames.append(("  " if state["holding"] else "") + "✓ " + ", ".join(state["delivered"]), "green")
            heirs.add_row(
                Text(heir.name, style="dim strike" if state["health"] <= 0 else "bold"),
                heir.path,
                state["location"],
                f"{state['health']:.0f}",
                coreflames if coreflames.plain else Text("–", style="dim"),
                action,
            )
        recent = [Text(line, style="dim", no_wrap=True, overflow="ellipsis") for line in self.recent] or [Text("…")]
        lately = Panel(Group(*recent), title="lately", title_align="left")
        return Panel(Group(head, heirs, lately), title=f"run {self.run}")
