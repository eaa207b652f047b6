"""Privacy through the real CLI: two heirs whose names differ by one accent never share a private memory. The
properties over random events and adversarial names are in the memory conformance suite (every backend runs
them: amphoreus_graph.testing)."""

from __future__ import annotations

import yaml

from amphoreus_graph.catalogs.scenario_files import packaged_scenarios
from amphoreus_graph.society.samples import read_samples


def test_through_the_cli_zoe_never_recalls_zoes_private_seed(tmp_path, cli):
    """Two heirs named "Zoé" and "Zoë" (both composed: é and ë) once slugged to one collection, so Zoé recalled
    Zoë's private seed. The real CLI, a real run: Zoë recalls it, Zoé never does."""
    raw = yaml.safe_load(packaged_scenarios()["trio"].read_text(encoding="utf-8"))
    raw.pop("seeds")  # the packaged trio's seeds folder; this run names its own with --seeds-dir
    raw["paths"] = str(packaged_scenarios()["trio"].parent / raw["paths"])  # packaged data: readable from anywhere
    names = {"Cyrene": "Zo\u00e9", "Phainon": "Zo\u00eb"}
    for heir in raw["heirs"]:
        heir["name"] = names.get(heir["name"], heir["name"])
        heir["relationships"] = {names.get(k, k): v for k, v in (heir.get("relationships") or {}).items()}
    scenario = tmp_path / "zoe.yaml"
    scenario.write_text(yaml.safe_dump(raw, allow_unicode=True), encoding="utf-8")
    secret = "Zoë alone knows the Coreflame of Time sleeps under the ninth olive tree."
    seeds = tmp_path / "seeds" / raw["name"]
    seeds.mkdir(parents=True)
    (seeds / "private.yaml").write_text(
        yaml.safe_dump([{"text": secret, "agents": ["Zo\u00eb"], "importance": 10}], allow_unicode=True),
        encoding="utf-8",
    )
    run = tmp_path / "run"
    code, out, err = cli(
        "simulate", "--scenario", str(scenario), "--seeds-dir", str(tmp_path / "seeds"), "--cycles", "1",
        "--rounds", "1", "--out", str(run), "--quiet",
    )  # fmt: skip
    assert code == 0, out + err
    recalled = {s.agent: [m.text for m in s.context.memories] for s in read_samples(run / "samples") if s.context}
    assert set(recalled) == {"Zo\u00e9", "Zo\u00eb", "Anaxagoras"}
    assert secret in recalled["Zo\u00eb"], "the owner recalls its seed (so this test can fail)"
    assert secret not in recalled["Zo\u00e9"] and secret not in recalled["Anaxagoras"]
