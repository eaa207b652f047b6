"""A `--model` family registered by another package (its own entry point) is given what the run's chat models
get: the endpoint, the key, the limits, the role, the response cache and the call log."""

from __future__ import annotations

from pathlib import Path

from amphoreus_graph.models.cache import ResponseCache
from amphoreus_graph.models.gateway import Role
from amphoreus_graph.models.transport import Transport
from amphoreus_graph.policy.registry import registered_policies, resolve_model

SITE = Path(__file__).parent / "outside_policy" / "site"  # what `pip install outside-policy` would leave


def test_an_outside_family_is_found_only_once_installed(monkeypatch):
    assert "echo" not in registered_policies()
    monkeypatch.syspath_prepend(str(SITE))
    assert registered_policies()["echo"].value == "tests.outside_policy.echo:echo_family"


def test_an_outside_family_is_given_the_endpoint_key_limits_cache_and_log(monkeypatch, tmp_path):
    monkeypatch.syspath_prepend(str(SITE))
    from tests.outside_policy.echo import GIVEN

    cache = ResponseCache(tmp_path / "cache")
    policy = resolve_model(
        "echo:hello",
        base_url="http://127.0.0.1:9/v1",
        api_key="sk-test",
        max_concurrency=3,
        timeout_s=7.0,
        temperature=0.4,
        role=Role.JUDGE,
        attempts=2,
        cache=cache,
        transport=Transport.AINVOKE,
    )
    note, access = GIVEN[-1]
    assert policy.name == "echo" and note == "hello"
    assert (access.base_url, access.api_key, access.max_concurrency, access.timeout_s) == (
        "http://127.0.0.1:9/v1",
        "sk-test",
        3,
        7.0,
    )
    assert (access.temperature, access.role, access.attempts, access.cache) == (0.4, Role.JUDGE, 2, cache)
    assert access.transport is Transport.AINVOKE
