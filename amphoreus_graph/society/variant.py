"""A run's own variant of its scenario (`--scenario-overrides`): checked whole before it is written, saved in the
run directory, and named by the run's config, so a resume, a report or a judge reads the world the run lived in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from amphoreus_graph.catalogs.scenario import Scenario, scenario_from
from amphoreus_graph.catalogs.scenario_files import variant_of, write_variant
from amphoreus_graph.layout import RunDir


def checked_variant(base: str, overrides: dict[str, Any], out: Path) -> Scenario:
    """The variant `out` would hold, loaded as any scenario is (one line for a mistake); nothing is written."""
    target = RunDir(out).scenario
    return scenario_from(variant_of(base, overrides), target)


def save_variant(base: str, overrides: dict[str, Any], out: Path) -> str:
    """Write the variant (`checked_variant` said it loads) into `out`, which must exist; return the scenario a config
    names for it."""
    target = RunDir(out).scenario
    write_variant(target, variant_of(base, overrides))
    return str(target.resolve())
