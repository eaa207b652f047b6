"""Onboarding a world: `amphoreus worlds`, `amphoreus new-world NAME` (a starter that runs as written), and the
walk-through in docs/worlds.md, whose own files (docs/tutorial/valley/) run here."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from amphoreus_graph.catalogs.scenario import load_scenario
from amphoreus_graph.society.samples import read_samples
from tests.conftest import REPO

TUTORIAL = REPO / "docs" / "tutorial" / "valley"
BLOCK = re.compile(r"```(?P<lang>\w+)\n(?P<body>.*?)```", re.S)


def test_worlds_lists_the_kinds_of_world_and_every_packaged_scenario(cli):
    code, out, err = cli("worlds")
    assert code == 0, err
    for kind in ("kit", "amphoreus", "gm"):
        assert kind in out
    for scenario in ("amphoreus", "trio", "fair", "fishery"):
        assert scenario in out


def test_new_world_writes_a_starter_that_runs_as_written(cli, tmp_path):
    code, out, err = cli("new-world", "lanterns", "--where", str(tmp_path))
    assert code == 0, err
    folder = tmp_path / "lanterns"
    assert sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()) == [
        "README.md",
        "lanterns.yaml",
        "seeds/lanterns.yaml",
    ]
    assert "{{" not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    run = tmp_path / "run"
    code, out, err = cli(
        "simulate", "--scenario", str(folder / "lanterns.yaml"), "--cycles", "1", "--rounds", "4",
        "--out", str(run), "--quiet",
    )  # fmt: skip
    assert code == 0, out + err
    samples = read_samples(run / "samples")
    assert {s.world for s in samples} == {"lanterns"} and {s.round for s in samples} == {1, 2, 3, 4}
    assert any("Wren" in m.text for s in samples for m in s.context.memories), "its seeds were planted"


def test_new_world_never_overwrites_and_wants_a_simple_name(cli, tmp_path):
    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "mine.txt").write_text("keep me")
    code, _, err = cli("new-world", "taken", "--where", str(tmp_path))
    assert code == 2 and "already exists" in err and (tmp_path / "taken" / "mine.txt").read_text() == "keep me"
    code, _, err = cli("new-world", "Two Words", "--where", str(tmp_path))
    assert code == 2 and "lowercase name" in err


def test_the_tutorials_world_runs_with_its_added_action_resolver_and_values(cli, tmp_path):
    scenario = load_scenario(str(TUTORIAL / "valley.yaml"))
    assert scenario.catalog.names() == ["Benevolence", "Self-Direction", "Conformity"]
    assert {"ring_bell", "tell_story"} <= set(scenario.world.actions)
    run = tmp_path / "valley"
    code, out, err = cli(
        "simulate", "--scenario", str(TUTORIAL / "valley.yaml"), "--cycles", "1", "--rounds", "8",
        "--seed", "2", "--out", str(run), "--quiet",
    )  # fmt: skip
    assert code == 0, out + err
    samples = read_samples(run / "samples")
    taken = Counter(s.decision.action for s in samples)
    assert taken["ring_bell"] and taken["tell_story"], taken
    assert "a story of the lamps" in (run / "chronicle" / "cycle-0001.jsonl").read_text()
    assert {s.path for s in samples} == {"Benevolence", "Self-Direction", "Conformity"}
    assert "Help those close to you." in next(s for s in samples if s.path == "Benevolence").messages[0]["content"]


@pytest.mark.parametrize("lang", ["yaml", "python"])
def test_every_snippet_the_walk_through_quotes_is_in_the_tutorials_files(lang):
    """docs/worlds.md quotes the tutorial's files; each quoted line must be in one of them, so the walk-through
    and the files it describes cannot drift apart."""
    sources = {
        "yaml": [
            TUTORIAL / "valley.yaml",
            TUTORIAL / "values.yaml",
            TUTORIAL / "long-night.yaml",
            TUTORIAL / "thrift.yaml",
            TUTORIAL / "bench" / "prose.yaml",
        ],
        "python": [TUTORIAL / "resolvers.py"],
    }[lang]
    text = "\n".join(p.read_text(encoding="utf-8") for p in sources)
    blocks = [m["body"] for m in BLOCK.finditer((REPO / "docs" / "worlds.md").read_text()) if m["lang"] == lang]
    assert blocks
    for block in blocks:
        for line in filter(str.strip, block.splitlines()):
            assert line in text, f"docs/worlds.md quotes a line the tutorial's files do not have: {line!r}"


def test_the_walk_throughs_catalog_extension_is_the_packaged_catalog_and_one_path_more():
    from amphoreus_graph.catalogs.paths import load_paths

    packaged, thrift = load_paths(), load_paths(str(TUTORIAL / "thrift.yaml"))
    assert list(thrift.paths) == [*packaged.paths, "Thrift"]
    assert thrift.patron_of("Thrift") == "patron: Mère Douce" and thrift["Thrift"].opposed == ["Elation"]
