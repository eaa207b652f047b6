"""Path catalogs and scenarios: what is packaged, what a user may bring (a world plug-in, a Path catalog, seeds),
and every mistake in them as one clear line that writes nothing."""

from __future__ import annotations

import shutil
import sys
from importlib.util import find_spec
from pathlib import Path
from typing import Any

import pytest
import yaml

from amphoreus_graph.catalogs.names import AMBIGUOUS
from amphoreus_graph.catalogs.paths import load_paths
from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.catalogs.scenario_files import packaged_scenarios
from amphoreus_graph.contracts.memory_seam import RetentionMode
from amphoreus_graph.errors import AmphoreusError, ScenarioError
from tests.test_toy_world import TOY

VALUES = """\
# Three Schwartz-style values as Paths: a user's own catalog, rating a few of the shared tags.
paths:
  - name: Benevolence
    summary: Care for the people close to you comes before your own gain.
    tenets: [Help those near you., Forgive what can be forgiven.]
    tags: {care: 0.9, alliance: 0.6, acquisition: -0.5}
    lexicon: [kindness, neighbour, share, help]
    opposed: [Power]
  - name: Power
    summary: Standing and control over resources are what keep a household safe.
    tenets: [Hold what you have., Let others owe you.]
    tags: {acquisition: 0.9, authority: 0.7, care: -0.4}
    lexicon: [control, standing, command, owe]
    opposed: [Benevolence]
  - name: Self-Direction
    summary: Think for yourself and find things out with your own eyes.
    tenets: [Question what you are told.]
    tags: {inquiry: 0.9, creation: 0.5, withdrawal: 0.2}
    lexicon: [curious, discover, my own way, wonder]
"""


def _one_line(code: int, out: str, err: str, *needles: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert "Traceback" not in out + err and all(needle in lines[0] for needle in needles), lines[0]
    return lines[0]


def _simulate(cli, scenario: Path | str, out: Path) -> tuple[int, str, str]:
    return cli("simulate", "--scenario", str(scenario), "--cycles", "1", "--rounds", "1", "--out", str(out), "--quiet")


def test_catalog_has_all_18_paths_rating_known_tags():
    catalog = load_paths()
    assert len(catalog.paths) == 18
    for name in ("Destruction", "Remembrance", "Erudition", "Nihility", "Harmony", "Trailblaze"):
        assert name in catalog
    for path in catalog.paths.values():
        assert path.tags and set(path.tags) <= set(catalog.tags)
        assert path.tenets and len(path.lexicon) >= 4
        assert all(opposed in catalog for opposed in path.opposed)


def test_paths_favour_different_tags_and_so_different_actions():
    catalog = load_paths()
    assert len({tuple(p.favoured(2)) for p in catalog.paths.values()}) == 18
    actions = load_scenario("amphoreus").world.actions
    top_two = {tuple(sorted(actions, key=lambda a: (-p.affinity(actions[a]), a))[:2]) for p in catalog.paths.values()}
    assert len(top_two) == 18, "the default world's actions carry tags that tell every Path apart"


def test_the_default_scenario():
    s = load_scenario("amphoreus")
    assert s.settings.world == "amphoreus" and len(s.agents) == 12 and len(s.world.actions) == 14
    assert len({a.path for a in s.agents}) >= 8
    genesis = s.world.view(s.world.genesis(1))
    assert len(genesis.objectives) == 12 and genesis.gauges and set(genesis.agents) == set(s.agent_names)
    assert {"Phainon", "Cyrene", "Aglaea", "Anaxagoras", "Castorice"} <= set(s.agent_names)
    assert s.retention_for("Remembrance").mode is RetentionMode.ALL
    assert all(a.path in s.settings.retention for a in s.agents)
    assert s.seeds_dir is not None and s.seeds_dir.is_dir(), "its seeds ship beside it"


def test_packaged_scenarios_include_a_small_one():
    assert {"amphoreus", "trio"} <= set(packaged_scenarios())
    assert len(load_scenario("trio").agents) == 3


def _trio() -> dict[str, Any]:
    """The packaged trio scenario's data, its seeds folder and Path catalog made absolute so a copy elsewhere still
    finds them."""
    source = packaged_scenarios()["trio"]
    raw = yaml.safe_load(source.read_text())
    return raw | {key: str(source.parent / raw[key]) for key in ("seeds", "paths")}


def _write(raw: dict[str, Any], path: Path) -> Path:
    path.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    return path


def _agents(raw: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """The key and list of a world file's agents (the default world names them in its own words)."""
    return next(
        (k, v) for k, v in raw.items() if isinstance(v, list) and v and isinstance(v[0], dict) and "path" in v[0]
    )


def _set_path(raw):
    _agents(raw)[1][1]["path"] = "Gluttony"


def _drop_persona(raw):
    del _agents(raw)[1][0]["persona"]


def _bad_start(raw):
    _agents(raw)[1][2]["start_location"] = "Nowhere"


def _bad_rounds(raw):
    raw["rounds_per_cycle"] = "many"


@pytest.mark.parametrize(
    ("mutate", "field", "expected"),
    [
        (_set_path, "agents[1].path", "unknown Path 'Gluttony'"),
        (_drop_persona, "[0].persona", "Field required"),
        (_bad_start, "[2].start_location", "unknown location 'Nowhere'"),
        (_bad_rounds, "rounds_per_cycle", "valid integer"),
    ],
)
def test_broken_scenario_is_one_clear_line(tmp_path, cli, mutate, field, expected):
    raw = _trio()
    mutate(raw)
    path = _write(raw, tmp_path / "broken.yaml")
    with pytest.raises(ScenarioError, match=field.replace("[", r"\[").replace("]", r"\]")):
        load_scenario(path)
    code, out, err = _simulate(cli, path, tmp_path / "run")
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == 2 and len(lines) == 1, err
    assert str(path) in err.replace("\n", "") and field in lines[0] and expected in lines[0]
    assert "Traceback" not in out + err
    assert not (tmp_path / "run").exists(), "nothing is written for a broken scenario"


def test_bad_yaml_names_line_and_column(tmp_path, cli):
    path = tmp_path / "bad.yaml"
    path.write_text("name: x\nagents: [unclosed\n")
    code, _, err = cli("simulate", "--scenario", str(path), "--quiet")
    assert code == 2
    assert "line" in err and "expected valid YAML" in err and "Traceback" not in err


@pytest.fixture
def wide(monkeypatch):
    """Tables drawn on a wide terminal, so a row is one line to read."""
    from amphoreus_graph.cli.console import console

    monkeypatch.setattr(console, "width", 240)


def test_cli_lists_paths_with_the_tags_they_rate_and_scenarios_with_their_worlds(cli, wide):
    code, out, _ = cli("paths")
    assert code == 0 and "Remembrance" in out and "Nihility" in out
    destruction = next(line for line in out.splitlines() if "Destruction" in line)
    assert "violence +0.9" in destruction and "withdrawal -0.8" in destruction
    code, out, _ = cli("scenarios")
    assert code == 0
    for name in ("amphoreus", "trio"):
        s = load_scenario(name)
        row = next(line for line in out.splitlines() if line.startswith(f"│ {name} "))
        cells = [cell.strip() for cell in row.strip("│").split("│")]
        assert cells[1] == s.settings.world and cells[2] in s.title
        assert cells[3:] == [
            f"{len(s.agents)} {s.world.labels.agents}",
            str(len({a.path for a in s.agents})),
            str(len(s.world.actions)),
            str(s.rounds_per_cycle),
        ]


def test_cli_lists_and_checks_a_users_path_catalog(tmp_path, cli, wide):
    good = tmp_path / "values.yaml"
    good.write_text(VALUES)
    code, out, err = cli("paths", "--catalog", str(good))
    assert code == 0, err
    assert all(name in out for name in ("Benevolence", "Power", "Self-Direction")) and "Destruction" not in out
    assert "acquisition +0.9" in next(line for line in out.splitlines() if line.startswith("│ Power "))
    bad = tmp_path / "bad-values.yaml"
    bad.write_text(VALUES.replace("inquiry: 0.9", "gold: 0.9"))
    _one_line(*cli("paths", "--catalog", str(bad)), str(bad), "unknown tags ['gold']")
    _one_line(*cli("paths", "--catalog", str(tmp_path / "none.yaml")), "no such Path catalog")


@pytest.fixture
def without_openai_extra(monkeypatch):
    """As if `pip install 'amphoreus-graph[openai]'` had not been run, whether or not it was (so the suite passes
    the same either way): langchain-openai cannot be imported, and langchain forgets the provider factories it
    caches once loaded (before and after, so no other test sees the pretence)."""
    from langchain.chat_models import base

    forget = getattr(getattr(base, "_get_chat_model_creator", None), "cache_clear", lambda: None)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    forget()
    yield
    forget()


def test_unknown_model_is_one_line(cli, tmp_path, without_openai_extra):
    code, _, err = cli("simulate", "--scenario", "trio", "--model", "nonsense", "--out", str(tmp_path / "r"), "--quiet")
    assert code == 2 and "--model 'nonsense'" in err and "Traceback" not in err
    code, _, err = cli(
        "simulate", "--scenario", "trio", "--model", "openai:gpt-4o-mini", "--out", str(tmp_path / "s"), "--quiet"
    )
    assert code == 2 and "amphoreus-graph[openai]" in err
    assert not (tmp_path / "r").exists() and not (tmp_path / "s").exists()


@pytest.mark.skipif(find_spec("langchain_openai") is None, reason="needs the [openai] extra")
def test_a_missing_api_key_with_the_openai_extra_is_one_line(cli, tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "s"
    code, _, err = cli("simulate", "--scenario", "trio", "--model", "openai:gpt-4o-mini", "--out", str(out), "--quiet")
    assert code == 2 and "OPENAI_API_KEY" in err and len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()


def test_base_url_without_the_openai_extra_is_one_line(cli, tmp_path, without_openai_extra):
    code, _, err = cli(
        "simulate", "--model", "qwen2.5", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "b")
    )
    assert code == 2 and "amphoreus-graph[openai]" in err and "Traceback" not in err


def _renamed(tmp_path: Path, names: dict[str, str]) -> Path:
    """The trio scenario with agents renamed (in their relationships too), written to tmp_path."""
    raw = _trio()
    for agent in _agents(raw)[1]:
        agent["name"] = names.get(agent["name"], agent["name"])
        agent["relationships"] = {names.get(k, k): v for k, v in (agent.get("relationships") or {}).items()}
    return _write(raw, tmp_path / "renamed.yaml")


def test_agents_whose_names_are_equal_after_nfc_are_one_clear_line(tmp_path, cli):
    """ "Zoé" typed composed and typed decomposed look alike everywhere but would be two agents to memory."""
    composed, decomposed = "Zo\u00e9", "Zoe\u0301"
    path = _renamed(tmp_path, {"Cyrene": composed, "Phainon": decomposed})
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    message = str(error.value)
    assert message.startswith(f"{path}: agents: ambiguous agent names ")
    assert message.endswith(f"({AMBIGUOUS}); expected names that differ")
    assert ascii(composed) in message and ascii(decomposed) in message
    code, out, err = _simulate(cli, path, tmp_path / "run")
    _one_line(code, out, err, "ambiguous agent names", "equal once normalised")
    assert not (tmp_path / "run").exists()
    assert load_scenario(_renamed(tmp_path, {"Cyrene": composed, "Phainon": "Zo\u00eb"})).agent_names[:2] == [
        composed,
        "Zo\u00eb",
    ], "names that differ after NFC (é and ë) are two agents"


def test_a_directory_given_as_a_scenario_says_it_is_a_directory(tmp_path, cli):
    with pytest.raises(ScenarioError, match="is a directory; expected a YAML file"):
        load_scenario(tmp_path)
    code, out, err = _simulate(cli, tmp_path, tmp_path / "run")
    _one_line(code, out, err, "is a directory; expected a YAML file")
    assert "no such scenario file" not in err and not (tmp_path / "run").exists()


def test_an_unknown_world_is_one_line(tmp_path, cli):
    path = _write(_trio() | {"world": "atlantis"}, tmp_path / "atlantis.yaml")
    with pytest.raises(ScenarioError, match=r"world: unknown world 'atlantis'; expected one of \[.*'amphoreus'"):
        load_scenario(path)
    _one_line(*_simulate(cli, path, tmp_path / "run"), str(path), "world: unknown world 'atlantis'", "module:attr")
    missing = _write(_trio() | {"world": "no_such_module:make"}, tmp_path / "missing.yaml")
    _one_line(*_simulate(cli, missing, tmp_path / "run"), "world: cannot load 'no_such_module:make'")
    assert not (tmp_path / "run").exists()


def _garden(folder: Path, **changes: Any) -> Path:
    """The toy garden world copied into `folder`: its plug-in file beside its scenario, as a user would have it."""
    source = Path(TOY).parent
    shutil.copytree(source, folder)
    raw = yaml.safe_load((folder / "toy.yaml").read_text()) | changes
    return _write(raw, folder / "toy.yaml")


def test_a_plug_in_file_beside_the_scenario_or_a_module_is_the_world(tmp_path):
    beside = load_scenario(_garden(tmp_path / "garden"))
    assert beside.settings.world == "garden.py:load" and beside.name == "toy-garden"
    assert beside.world.labels.agent == "neighbour" and set(beside.world.actions) == {"pick", "tend", "gift", "rest"}
    assert beside.seeds_dir == (tmp_path / "garden" / "seeds").resolve()
    by_module = load_scenario(
        _write(_trio() | {"world": "amphoreus_graph.worlds.amphoreus:load_world"}, tmp_path / "m.yaml")
    )
    assert type(by_module.world) is type(load_scenario("trio").world) and by_module.agent_names == [
        "Cyrene",
        "Phainon",
        "Anaxagoras",
    ]


def test_a_users_path_catalog_named_by_the_scenario_is_the_one_its_agents_walk(tmp_path, cli):
    folder = tmp_path / "garden"
    path = _garden(folder, paths="values.yaml")
    raw = yaml.safe_load(path.read_text())
    for agent, value in zip(raw["agents"], ("Benevolence", "Power", "Self-Direction"), strict=True):
        agent["path"] = value
    _write(raw, path)
    (folder / "values.yaml").write_text(VALUES)
    scenario = load_scenario(path)
    assert scenario.catalog.names() == ["Benevolence", "Power", "Self-Direction"]
    pick = scenario.world.actions["pick"]
    assert scenario.catalog["Power"].affinity(pick) > 0 > scenario.catalog["Benevolence"].affinity(pick)
    code, out, err = _simulate(cli, path, tmp_path / "run")
    assert code == 0, err
    assert "most fruits:" in out

    (folder / "bad-values.yaml").write_text(VALUES.replace("inquiry: 0.9", "gold: 0.9"))
    bad = _write(raw | {"paths": "bad-values.yaml"}, folder / "bad.yaml")  # scenarios are read once per process
    with pytest.raises(AmphoreusError, match=r"unknown tags \['gold'\]"):
        load_scenario(bad)
    _one_line(*_simulate(cli, bad, tmp_path / "bad-tag"), "bad-values.yaml", "unknown tags ['gold']")
    assert not (tmp_path / "bad-tag").exists()


def test_an_agent_on_a_path_its_catalog_lacks_is_one_line(tmp_path, cli):
    folder = tmp_path / "garden"
    path = _garden(folder, paths="values.yaml")
    (folder / "values.yaml").write_text(VALUES)
    line = _one_line(*_simulate(cli, path, tmp_path / "run"), str(path), "agents[0].path: unknown Path 'Abundance'")
    assert "expected one of ['Benevolence', 'Power', 'Self-Direction']" in line
    assert not (tmp_path / "run").exists()


def test_a_missing_seeds_folder_is_one_line(tmp_path, cli):
    path = _garden(tmp_path / "garden", seeds="no-such-seeds")
    _one_line(*_simulate(cli, path, tmp_path / "run"), str(path), "seeds: no such folder", "no-such-seeds")
    assert not (tmp_path / "run").exists()
