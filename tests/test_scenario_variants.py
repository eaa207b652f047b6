"""Scenario variants: a file that `extends` another states only what differs (a JSON merge patch onto it), and a
run's `--scenario-overrides` is such a variant saved in its directory."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.catalogs.scenario_files import merge_patch, read_overrides
from amphoreus_graph.errors import ScenarioError
from amphoreus_graph.layout import RunDir

FISHERY = load_scenario("fishery")


def write(path: Path, data: dict) -> Path:
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_merge_patch_merges_mappings_removes_nulls_and_replaces_the_rest() -> None:
    base = {"a": {"b": 1, "c": [1, 2], "d": "x"}, "e": 5}
    patch = {"a": {"b": 2, "c": [3], "d": None, "f": {"g": 1}}, "h": "new"}
    assert merge_patch(base, patch) == {"a": {"b": 2, "c": [3], "f": {"g": 1}}, "e": 5, "h": "new"}
    assert base == {"a": {"b": 1, "c": [1, 2], "d": "x"}, "e": 5}, "the base is not changed in place"


def test_a_variant_is_its_base_with_the_changes(tmp_path: Path) -> None:
    variant = load_scenario(write(tmp_path / "short.yaml", {"extends": "fishery", "rounds_per_cycle": 3}))
    assert variant.rounds_per_cycle == 3
    assert variant.agent_names == FISHERY.agent_names
    assert variant.seeds_dir == FISHERY.seeds_dir, "relative references resolve from the base's folder"
    assert variant.ref == str((tmp_path / "short.yaml").resolve())


def test_variants_chain_and_extend_files_relative_to_themselves(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "sub" / "short.yaml", {"extends": "fishery", "rounds_per_cycle": 3})
    shorter = load_scenario(write(tmp_path / "shorter.yaml", {"extends": "sub/short.yaml", "title": "Shorter"}))
    assert (shorter.rounds_per_cycle, shorter.title) == (3, "Shorter")


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"a.yaml": {"extends": "b.yaml"}, "b.yaml": {"extends": "a.yaml"}}, "(a cycle)"),
        ({"a.yaml": {"extends": "nowhere.yaml"}}, "no such scenario 'nowhere.yaml'"),
        ({"a.yaml": {"extends": 3}}, "extends: expected a packaged scenario name"),
        ({"a.yaml": {"extends": "fishery", "rounds_per_cycle": "many"}}, "(extends "),
    ],
)
def test_a_broken_variant_is_one_line_naming_it(tmp_path: Path, files: dict, message: str) -> None:
    for name, data in files.items():
        write(tmp_path / name, data)
    with pytest.raises(ScenarioError) as caught:
        load_scenario(tmp_path / "a.yaml")
    text = str(caught.value)
    assert message in text and "\n" not in text and text.startswith(str(tmp_path)), text


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ("[1, 2]", "expected a mapping"),
        ("{}", "expected a mapping"),
        ("{a: [", "not valid YAML"),
        ("missing.yaml", "no such file"),
        ("{extends: trio}", "expected only the changes"),
        ("- a\n- b", "expected a mapping"),
    ],
)
def test_overrides_that_are_not_a_mapping_of_changes_are_refused(given: str, message: str) -> None:
    with pytest.raises(ScenarioError, match="--scenario-overrides") as caught:
        read_overrides(given, "--scenario-overrides")
    assert message in str(caught.value) and "\n" not in str(caught.value)


def test_overrides_come_inline_or_from_a_file(tmp_path: Path) -> None:
    assert read_overrides('{"rounds_per_cycle": 8}', "--o") == {"rounds_per_cycle": 8}
    file = write(tmp_path / "o.yaml", {"memory": {"attention": 2}})
    assert read_overrides(str(file), "--o") == {"memory": {"attention": 2}}


def test_a_run_with_overrides_lives_in_its_variant_and_resumes_in_it(tmp_path: Path, cli) -> None:
    out = tmp_path / "short"
    args = ["simulate", "--scenario", "fishery", "--cycles", "1", "--out", str(out), "--quiet"]
    code, _, err = cli(*args, "--scenario-overrides", "{rounds_per_cycle: 2}")
    assert code == 0, err
    run = RunDir(out)
    assert yaml.safe_load(run.scenario.read_text()) == {"extends": "fishery", "rounds_per_cycle": 2}
    assert json.loads(run.config.read_text())["scenario"] == str(run.scenario.resolve())
    assert [json.loads(row)["round"] for row in (run.chronicle / "cycle-0001.jsonl").read_text().splitlines()] == [1, 2]
    sample = json.loads((run.samples / "cycle-0001.jsonl").read_text().splitlines()[0])
    assert load_scenario(sample["context"]["world"]).rounds_per_cycle == 2, "a sample names the world it lived in"
    code, _, err = cli("report", str(out))
    assert code == 0, err


def test_a_bad_override_is_one_line_and_writes_nothing(tmp_path: Path, cli) -> None:
    out = tmp_path / "bad"
    code, _, err = cli(
        "simulate", "--scenario", "fishery", "--out", str(out), "--scenario-overrides", "{rounds_per_cycle: 0}"
    )
    assert code == 2 and len(err.strip().splitlines()) == 1 and "rounds_per_cycle" in err, err
    assert not out.exists()
    code, _, err = cli("simulate", "--societies", "2", "--scenario-overrides", "{rounds_per_cycle: 2}")
    assert code == 2 and "one society" in err, err


def test_the_tutorials_variant_is_the_valley_on_a_longer_night() -> None:
    tutorial = Path(__file__).resolve().parents[1] / "docs" / "tutorial" / "valley"
    valley, night = load_scenario(tutorial / "valley.yaml"), load_scenario(tutorial / "long-night.yaml")
    assert (valley.rounds_per_cycle, night.rounds_per_cycle) == (8, 12)
    assert night.catalog.names() == valley.catalog.names(), "its Path catalog resolves from the valley's folder"
    oil = {name: agent["stats"]["oil"] for name, agent in night.world.genesis(1)["agents"].items()}
    assert set(oil.values()) == {0.0} and valley.world.genesis(1)["agents"] != night.world.genesis(1)["agents"]
