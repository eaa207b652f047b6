"""Models per agent or per Path: one society, several deciders (a strong model for the agents who matter, a small
one for the rest, the offline policy for some).

`--model-for NAME=SPEC` (repeatable) or a scenario's `models:` key names a `--model` string for an agent (by its
exact name) or for every agent of a Path; an agent's own entry wins over its Path's, and everyone else gets the
run's `--model`. Each decider is resolved once and shared; what each decided is recorded on the sample.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from amphoreus_graph.contracts.turn import Decision, Policy, PolicyResult, TurnContext
from amphoreus_graph.errors import ModelSpecError
from amphoreus_graph.policy.discretion import Reconsiders


class RoutedPolicy:
    """Decides each turn with the policy named for its agent, else for its Path, else the default."""

    def __init__(self, default: Policy, by_name: Mapping[str, Policy]) -> None:
        self.default = default
        self.by_name = dict(by_name)
        self.name = default.name
        self.caller = getattr(default, "caller", None)  # memory's raters ask the run's own model, if it has one

    def for_turn(self, turn: TurnContext) -> Policy:
        return self.by_name.get(turn.agent) or self.by_name.get(turn.path) or self.default

    async def adecide(self, turn: TurnContext) -> PolicyResult:
        policy = self.for_turn(turn)
        result = await policy.adecide(turn)
        if policy is not self.default and not result.decided_by:
            result.decided_by = policy.name
        return result

    async def areconsider(
        self, turn: TurnContext, decision: Decision, result: PolicyResult, instruction: str
    ) -> Decision | None:
        """Asked again by the policy that decided the turn, if it can be (a model); else None."""
        policy = self.for_turn(turn)
        if not isinstance(policy, Reconsiders):
            return None
        return await policy.areconsider(turn, decision, result, instruction)


def parse_model_for(pairs: list[str]) -> dict[str, str]:
    """`NAME=SPEC` pairs (an agent's exact name or a Path's) as a mapping; a pair without `=` is one line."""
    routes: dict[str, str] = {}
    for pair in pairs:
        name, sep, spec = pair.partition("=")
        if not sep or not name.strip() or not spec.strip():
            raise ModelSpecError(
                f"--model-for {pair!r}: expected NAME=MODEL (an agent or a Path, then a --model string)"
            )
        routes[name.strip()] = spec.strip()
    return routes


def routed(default: Policy, routes: Mapping[str, str], known: set[str], resolve: Callable[[str], Policy]) -> Policy:
    """The run's policy with its routes: each route's name must be an agent or Path of the scenario (`known`), so
    a typo does not quietly leave that agent on the default model."""
    if not routes:
        return default
    if unknown := sorted(set(routes) - known):
        raise ModelSpecError(
            f"--model-for {unknown[0]!r}: no agent or Path of this scenario; expected one of {sorted(known)}"
        )
    resolved: dict[str, Policy] = {}
    by_spec: dict[str, Policy] = {}
    for name, spec in routes.items():
        if spec not in by_spec:
            by_spec[spec] = resolve(spec)
        resolved[name] = by_spec[spec]
    return RoutedPolicy(default, resolved)
