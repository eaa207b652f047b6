"""Path catalogs that extend another (`paths: {extends, add, drop, change}`), patrons only where a catalog names
them, and the packaged catalog free of the default world's proper nouns."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.catalogs.path_words import PathWordMask
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import load_scenario, scenario_of
from amphoreus_graph.errors import AmphoreusError
from amphoreus_graph.policy.prompt import system_prompt
from amphoreus_graph.society.perception import build_turn
from tests.test_paths_and_scenarios import VALUES, _garden, _one_line, _write

THRIFT = {
    "name": "Thrift",
    "patron": "Mère Douce",
    "summary": "Waste nothing; what is saved today feeds tomorrow.",
    "tenets": ["Mend before you buy.", "Count twice, spend once."],
    "tags": {"acquisition": 0.3, "care": 0.4, "sacrifice": -0.5},
    "lexicon": ["frugal", "thrift", "mend", "penny saved"],
    "opposed": ["Elation"],
}


def _catalog(folder: Path, paths: object, name: str = "mine.yaml", **top: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / name
    target.write_text(yaml.safe_dump({**top, "paths": paths}, sort_keys=False, allow_unicode=True))
    return target


def _fails(file: Path, *needles: str) -> str:
    with pytest.raises(AmphoreusError) as caught:
        load_paths(str(file))
    line = str(caught.value)
    assert "\n" not in line and str(file) in line and all(n in line for n in needles), line
    return line


def test_an_extension_adding_one_path_is_the_packaged_catalog_and_that_path(tmp_path):
    catalog = load_paths(str(_catalog(tmp_path, {"extends": "default", "add": [THRIFT]})))
    assert catalog.names() == [*load_paths().names(), "Thrift"]
    assert catalog["Thrift"].patron == "Mère Douce" and catalog.patron_of("Thrift") == "patron: Mère Douce"
    assert catalog["Destruction"] == load_paths()["Destruction"] and catalog.tags == load_paths().tags


def test_an_extension_can_extend_another_file_beside_it(tmp_path):
    _catalog(tmp_path, {"extends": "default", "add": [THRIFT]}, "base.yaml", patron_title="Saint")
    second = {**THRIFT, "name": "Largesse", "patron": "", "opposed": ["Thrift"]}
    catalog = load_paths(str(_catalog(tmp_path, {"extends": "base.yaml", "add": [second]}, tags={"feast": "eating"})))
    assert catalog.names()[-2:] == ["Thrift", "Largesse"] and catalog.patron_title == "Saint"
    assert catalog.patron_of("Thrift") == "Saint Mère Douce" and catalog.patron_of("Largesse") == ""
    assert catalog.tags["feast"] == "eating" and "violence" in catalog.tags


def test_dropping_a_path_others_oppose_names_the_path_the_field_and_the_missing_one(tmp_path, cli):
    file = _catalog(tmp_path, {"extends": "default", "drop": ["Preservation"]})
    opposers = [p.name for p in load_paths().paths.values() if "Preservation" in p.opposed]
    line = _one_line(*cli("paths", "--catalog", str(file)), str(file), f"paths: {opposers[0]}: opposed:")
    assert "no Path 'Preservation'" in line
    change = {name: {"opposed": [o for o in load_paths()[name].opposed if o != "Preservation"]} for name in opposers}
    catalog = load_paths(str(_catalog(tmp_path, {"extends": "default", "drop": ["Preservation"], "change": change})))
    assert "Preservation" not in catalog and len(catalog.names()) == 17
    _fails(_catalog(tmp_path, {"extends": "default", "drop": ["Frugality"]}, "x.yaml"), "paths.drop", "'Frugality'")


def test_an_added_path_opposing_a_path_nobody_has_is_one_line(tmp_path, cli):
    file = _catalog(tmp_path, {"extends": "default", "add": [{**THRIFT, "opposed": ["Gluttony"]}]})
    _one_line(*cli("paths", "--catalog", str(file)), str(file), "paths: Thrift: opposed: no Path 'Gluttony'")


def test_a_change_merges_fields_into_a_path_of_the_base(tmp_path):
    change = {"Destruction": {"summary": "Tear it down.", "tags": {"care": 0.5}}}
    catalog = load_paths(str(_catalog(tmp_path, {"extends": "default", "change": change})))
    changed, packaged = catalog["Destruction"], load_paths()["Destruction"]
    assert changed.summary == "Tear it down." and changed.tenets == packaged.tenets
    assert changed.tags == {**packaged.tags, "care": 0.5}  # mappings merge key by key
    assert catalog.names() == load_paths().names()


@pytest.mark.parametrize(
    ("paths", "needles"),
    [
        ({"extends": "default", "change": {"Frugality": {"summary": "x"}}}, ["paths.change.Frugality", "no Path"]),
        ({"extends": "default", "change": {"Destruction": {"colour": "red"}}}, ["paths.change.Destruction.colour"]),
        ({"extends": "default", "change": {"Destruction": {"tags": {"care": 3}}}}, ["paths.change.Destruction"]),
        ({"extends": "default", "change": {"Destruction": {"name": "Ruin"}}}, ["cannot rename"]),
        ({"extends": "default", "add": [{**THRIFT, "name": "Order"}]}, ["paths.add[0]", "'Order' is already"]),
        ({"extends": "default", "add": [{**THRIFT, "colour": "red"}]}, ["paths.add[0].colour"]),
        ({"extends": "default", "add": [{"name": "Thrift"}]}, ["paths.add[0].summary", "Field required"]),
        ({"extends": "default", "remove": ["Order"]}, ["paths.remove", "Extra inputs"]),
        ({"add": [THRIFT]}, ["paths.extends", "Field required"]),
        ({"extends": "default", "drop": "Order"}, ["paths.drop"]),
        ({"extends": "no-such.yaml"}, ["paths.extends", "no such catalog 'no-such.yaml'"]),
        ({"extends": "../outside.yaml"}, ["paths.extends", "lies outside"]),
        (5, ["paths: expected a list of Paths, or a mapping with `extends`"]),
    ],
)
def test_a_bad_extension_is_one_line_naming_the_file_and_field(tmp_path, paths, needles):
    (tmp_path / "outside.yaml").write_text(VALUES)
    _fails(_catalog(tmp_path / "mine", paths), *needles)


def test_a_cycle_of_extensions_is_one_line(tmp_path):
    _catalog(tmp_path, {"extends": "b.yaml"}, "a.yaml")
    _catalog(tmp_path, {"extends": "a.yaml"}, "b.yaml")
    _fails(tmp_path / "a.yaml", "paths.extends", "(a cycle)")
    _fails(_catalog(tmp_path, {"extends": "self.yaml"}, "self.yaml"), "(a cycle)")


def test_a_catalog_that_still_says_aeon_loads_with_that_title(tmp_path):
    old = yaml.safe_load(VALUES)
    old["paths"][0]["aeon"] = "Mother"
    catalog = load_paths(str(_catalog(tmp_path, old["paths"])))
    assert catalog["Benevolence"].patron == "Mother" and catalog.patron_of("Benevolence") == "Aeon Mother"
    assert catalog.patron_of("Power") == ""
    old["paths"][0]["patron"] = "Father"
    _fails(_catalog(tmp_path, old["paths"], "both.yaml"), "paths[0]", "`aeon` (its old name)")


def test_the_packaged_catalog_has_no_patron_and_the_default_world_names_its_aeons(tmp_path):
    packaged = load_paths()
    assert packaged.patron_title == "" and not any(p.patron for p in packaged.paths.values())
    world = scenario_of("amphoreus").catalog
    assert world.same_paths(packaged) and world.patron_title == "Aeon"
    assert all(p.patron for p in world.paths.values()) and world.patron_of("Destruction") == "Aeon Nanook"
    # as proper nouns, capitalised: "terminus" is a Path word of Finality's, in plain English
    text = (Path(__file__).parents[1] / "amphoreus_graph" / "catalogs" / "paths.yaml").read_text()
    named = [p.patron for p in world.paths.values() if re.search(rf"\b{re.escape(p.patron)}\b", text)]
    assert not named, f"the packaged catalog names the default world's patrons {named}"


def test_prompts_name_a_patron_only_where_the_catalog_has_one(tmp_path):
    def prompt(scenario, agent: str) -> str:
        return system_prompt(
            build_turn(agent, scenario.world.genesis(1), scenario, situation="", memories=[], seed=1, run_id="t")
        )

    trio = scenario_of("trio")
    assert "You walk the Path of Remembrance (Aeon Fuli): " in prompt(trio, "Cyrene")
    folder = tmp_path / "garden"
    path = _garden(folder, paths="values.yaml")
    _catalog(folder, {"extends": "default", "add": [THRIFT]}, "values.yaml")
    raw = yaml.safe_load(path.read_text())
    raw["agents"][0]["path"], raw["agents"][1]["path"] = "Thrift", "Destruction"
    garden = load_scenario(_write(raw, path))
    first, second = (prompt(garden, a["name"]) for a in raw["agents"][:2])
    assert "You walk the Path of Thrift (patron: Mère Douce): Waste nothing" in first
    assert "You walk the Path of Destruction: Creation was a mistake" in second
    assert "Aeon" not in first + second and "()" not in first + second


def test_the_mask_takes_out_the_patrons_of_the_catalog_in_use(tmp_path):
    speech = "By Nanook and Mère Douce, I will not."
    world = PathWordMask.of(scenario_of("amphoreus").catalog).mask(speech)
    assert "Nanook" not in world and "Mère Douce" in world
    mine = load_paths(str(_catalog(tmp_path, {"extends": "default", "add": [THRIFT]})))
    assert PathWordMask.of(mine).mask(speech) == "By Nanook and , I will not."
