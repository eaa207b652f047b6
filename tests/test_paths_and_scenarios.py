from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from amphoreus_graph.actions import Action
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import RetentionMode, load_scenario, packaged_scenarios
from amphoreus_graph.errors import ScenarioError


def test_catalog_has_all_18_paths_with_an_affinity_for_every_action():
    catalog = load_paths()
    assert len(catalog.paths) == 18
    for name in ("Destruction", "Remembrance", "Erudition", "Nihility", "Harmony", "Trailblaze"):
        assert name in catalog
    for path in catalog.paths.values():
        assert set(path.affinity) == set(Action)
        assert path.aeon and path.tenets and len(path.lexicon) >= 4
        assert all(opposed in catalog for opposed in path.opposed)


def test_paths_favour_different_actions():
    catalog = load_paths()
    top_two = {tuple(p.favoured(2)) for p in catalog.paths.values()}
    assert len(top_two) == 18


def test_default_scenario_is_the_chrysos_heirs():
    s = load_scenario("amphoreus")
    assert len(s.heirs) == 12
    assert len({h.path for h in s.heirs}) >= 8
    assert len(s.titans) == 12 and len({t.coreflame for t in s.titans}) == 12
    assert len(s.locations) >= 6
    assert s.director == "Lycurgus"
    assert len({h.seeks for h in s.heirs}) == 12
    assert {"Phainon", "Cyrene", "Aglaea", "Anaxagoras", "Castorice"} <= set(s.heir_names)
    assert s.retention_for("Remembrance").mode is RetentionMode.ALL
    assert all(h.path in s.retention for h in s.heirs)


def test_packaged_scenarios_include_a_small_one():
    assert {"amphoreus", "trio"} <= set(packaged_scenarios())
    assert len(load_scenario("trio").heirs) == 3


def _broken(tmp_path: Path, mutate) -> Path:
    raw = yaml.safe_load(packaged_scenarios()["trio"].read_text())
    mutate(raw)
    path = tmp_path / "broken.yaml"
    path.write_text(yaml.safe_dump(raw))
    return path


def _set_path(raw):
    raw["heirs"][1]["path"] = "Gluttony"


def _drop_persona(raw):
    del raw["heirs"][0]["persona"]


def _bad_titan(raw):
    raw["heirs"][2]["seeks"] = "Chronos"


def _bad_rounds(raw):
    raw["rounds_per_cycle"] = "many"


@pytest.mark.parametrize(
    ("mutate", "field", "expected"),
    [
        (_set_path, "heirs[1].path", "unknown Path 'Gluttony'"),
        (_drop_persona, "heirs[0].persona", "Field required"),
        (_bad_titan, "heirs[2].seeks", "unknown Titan 'Chronos'"),
        (_bad_rounds, "rounds_per_cycle", "valid integer"),
    ],
)
def test_broken_scenario_is_one_clear_line(tmp_path, cli, mutate, field, expected):
    path = _broken(tmp_path, mutate)
    with pytest.raises(ScenarioError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load_scenario(path)
    code, out, err = cli("simulate", "--scenario", str(path), "--out", str(tmp_path / "run"), "--quiet")
    assert code == 2
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert str(path) in err.replace("\n", "") and field in lines[0] and expected in lines[0]
    assert "Traceback" not in out + err
    assert not (tmp_path / "run").exists(), "nothing is written for a broken scenario"


def test_bad_yaml_names_line_and_column(tmp_path, cli):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nheirs: [unclosed\n")
    code, _, err = cli("simulate", "--scenario", str(path), "--quiet")
    assert code == 2
    assert "line" in err and "expected valid YAML" in err and "Traceback" not in err


def test_cli_lists_paths_and_scenarios(cli):
    code, out, _ = cli("paths")
    assert code == 0 and "Remembrance" in out and "Nihility" in out
    code, out, _ = cli("scenarios")
    assert code == 0 and "amphoreus" in out and "trio" in out


def test_unknown_model_is_one_line(cli, tmp_path):
    code, _, err = cli("simulate", "--scenario", "trio", "--model", "nonsense", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 2 and "--model 'nonsense'" in err and "Traceback" not in err
    code, _, err = cli(
        "simulate", "--scenario", "trio", "--model", "openai:gpt-4o-mini", "--out", str(tmp_path / "s"), "--quiet"
    )
    assert code == 2 and "amphoreus-graph[openai]" in err
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


def test_base_url_without_the_openai_extra_is_one_line(cli, tmp_path):
    code, _, err = cli(
        "simulate", "--model", "qwen2.5", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "b")
    )
    assert code == 2 and "amphoreus-graph[openai]" in err and "Traceback" not in err


def _renamed(tmp_path: Path, names: dict[str, str]) -> Path:
    """The trio scenario with heirs renamed (in their relationships too), written to tmp_path."""
    raw = yaml.safe_load(packaged_scenarios()["trio"].read_text())
    for heir in raw["heirs"]:
        heir["name"] = names.get(heir["name"], heir["name"])
        heir["relationships"] = {names.get(k, k): v for k, v in (heir.get("relationships") or {}).items()}
    path = tmp_path / "renamed.yaml"
    path.write_text(yaml.safe_dump(raw), encoding="utf-8")
    return path


def test_heirs_whose_names_are_equal_after_nfc_are_one_clear_line(tmp_path, cli):
    """ "Zoé" typed composed and typed decomposed look alike everywhere but would be two heirs to memory."""
    composed, decomposed = "Zo\u00e9", "Zoe\u0301"
    path = _renamed(tmp_path, {"Cyrene": composed, "Phainon": decomposed})
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    message = str(error.value)
    assert message.startswith(f"{path}: heirs: duplicate heir names ")
    assert message.endswith("after Unicode normalisation (NFC); expected unique names")
    assert ascii(composed) in message and ascii(decomposed) in message
    code, out, err = cli("simulate", "--scenario", str(path), "--out", str(tmp_path / "run"), "--quiet")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "after Unicode normalisation (NFC)" in lines[0], err
    assert "Traceback" not in out + err and not (tmp_path / "run").exists()
    assert load_scenario(_renamed(tmp_path, {"Cyrene": composed, "Phainon": "Zo\u00eb"})).heir_names[:2] == [
        composed,
        "Zo\u00eb",
    ], "names that differ after NFC (é and ë) are two heirs"


def test_a_directory_given_as_a_scenario_says_it_is_a_directory(tmp_path, cli):
    with pytest.raises(ScenarioError, match="is a directory; expected a YAML file"):
        load_scenario(tmp_path)
    code, out, err = cli("simulate", "--scenario", str(tmp_path), "--out", str(tmp_path / "run"), "--quiet")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1 and "is a directory; expected a YAML file" in lines[0], err
    assert "no such scenario file" not in err and "Traceback" not in out + err
    assert not (tmp_path / "run").exists()
