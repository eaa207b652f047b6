"""The Amphoreus world's own scenario schema: locations, Titans and their Coreflames, the Chrysos Heirs, the
Black Tide, how a cycle may end, and the director's situations. Cross-references are checked on load."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Location(_Strict):
    name: str
    description: str = ""


class Titan(_Strict):
    name: str
    domain: str
    coreflame: str
    location: str


class Heir(_Strict):
    """A Chrysos Heir: who they are, the Path they walk, and the Coreflame they chase."""

    name: str
    title: str = ""
    path: str
    secondary_path: str | None = None
    seeks: str = Field(description="the Titan whose Coreflame this heir chases")
    persona: str
    traits: list[str] = Field(default_factory=list)
    start_location: str
    relationships: dict[str, float] = Field(
        default_factory=dict, description="initial trust in other heirs, -1 (enmity) to 1 (devotion)"
    )


class BlackTide(_Strict):
    start: float = Field(default=10.0, ge=0)
    rise_per_round: float = Field(default=4.0, ge=0)
    limit: float = Field(default=100.0, gt=0, description="the Tide wins the cycle when it reaches this")


class EndConditions(_Strict):
    era_nova: bool = Field(default=True, description="end the cycle once every Coreflame is delivered")
    black_tide: bool = Field(default=True, description="end the cycle when the Black Tide reaches its limit")
    all_fallen: bool = Field(default=True, description="end the cycle when every heir has fallen")


class AmphoreusSpec(_Strict):
    """The whole world. Cross-references (Titans, locations, heirs) are checked by `check_references`."""

    name: str
    title: str
    description: str
    director: str = "Lycurgus"
    vortex: str = Field(description="the location where Coreflames are delivered")
    rounds_per_cycle: int = Field(default=12, ge=1)
    locations: list[Location] = Field(min_length=1)
    titans: list[Titan] = Field(min_length=1)
    heirs: list[Heir] = Field(min_length=1)
    black_tide: BlackTide = BlackTide()
    end_conditions: EndConditions = EndConditions()
    situations: list[str] = Field(
        default_factory=list, description="situation templates the director draws from each round"
    )

    def heir(self, name: str) -> Heir:
        return next(h for h in self.heirs if h.name == name)

    def titan(self, name: str) -> Titan:
        return next(t for t in self.titans if t.name == name)

    @property
    def heir_names(self) -> list[str]:
        return [h.name for h in self.heirs]


def check_references(spec: AmphoreusSpec) -> tuple[str, str] | None:
    """(field path, what was expected) for the first dangling reference or duplicate, else None."""
    locations = {loc.name for loc in spec.locations}
    titans = {t.name for t in spec.titans}
    heirs = set(spec.heir_names)

    checks: list[tuple[str, str, str, set[str]]] = [("vortex", spec.vortex, "location", locations)]
    for i, titan in enumerate(spec.titans):
        checks.append((f"titans[{i}].location", titan.location, "location", locations))
    for i, heir in enumerate(spec.heirs):
        checks.append((f"heirs[{i}].seeks", heir.seeks, "Titan", titans))
        checks.append((f"heirs[{i}].start_location", heir.start_location, "location", locations))
        for other in heir.relationships:
            checks.append((f"heirs[{i}].relationships.{other}", other, "heir", heirs - {heir.name}))
    for field, value, kind, options in checks:
        if value not in options:
            return field, f"unknown {kind} {value!r}; expected one of {sorted(options)}"
    for kind, names in (("heir", spec.heir_names), ("Titan", [t.name for t in spec.titans])):
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            return f"{kind.lower()}s", f"duplicate {kind} names {dupes}; expected unique names"
    return None
