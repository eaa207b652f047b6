"""The kit's effect vocabulary: one class per effect, owning its YAML shape, its check against the world when it
loads (`check`) and what it does in a round (`apply`). A new effect is one class here and one line in `EFFECTS`.

`places` says where an effect may be written: an action's effects, an objective's transitions, a threshold, a
rule of the whole world (triggers, the director, a vote's outcome, `every_round` of the world), or an
`every_round` rule of each agent or each pair.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, BeforeValidator, Discriminator, Field, Tag

from amphoreus_graph.contracts.actions import Reach, TargetKind
from amphoreus_graph.worlds.kit import social
from amphoreus_graph.worlds.kit.problems import Problem, known
from amphoreus_graph.worlds.kit.terms import Amount, PositiveAmount, Status, Strict, Transition, Who

if TYPE_CHECKING:
    from amphoreus_graph.contracts.turn import Decision
    from amphoreus_graph.worlds.kit.checks import _Checker
    from amphoreus_graph.worlds.kit.compiled import Compiled
    from amphoreus_graph.worlds.kit.rules import Round, _Ctx
    from amphoreus_graph.worlds.kit.schema import ActionDecl
    from amphoreus_graph.worlds.kit.state import KitState
    from amphoreus_graph.worlds.kit.world import Pressing

ACTION, TRANSITION, THRESHOLD, WORLD, AGENT, PAIR = "action", "transition", "threshold", "world", "agent", "pair"
EVERYWHERE = frozenset({ACTION, TRANSITION, THRESHOLD, WORLD, AGENT, PAIR})
ACTS = frozenset({ACTION})  # an agent's own deed: it needs a decision


# ----------------------------------------------------------------------------------------------- arguments


class NoArgs(Strict):
    pass


class MoveArgs(Strict):
    to: str | None = Field(default=None, description="a fixed destination; default: the decision's target")


class ObjectiveArgs(Strict):
    objective: str | None = Field(default=None, description="a fixed objective; default: the decision's target")


class DouseArgs(ObjectiveArgs):
    chance: float = Field(default=1.0, ge=0, le=1)


class TakeArgs(Strict):
    chance: float = Field(default=1.0, ge=0, le=1)


class AmountArgs(Strict):
    amount: PositiveAmount = Field(description="a number > 0, or an expression (below 0 counts as 0)")
    stat: str | None = Field(default=None, description="default: the world's vital stat")
    who: Who = Who.TARGET


class ShieldArgs(Strict):
    who: Literal["actor", "target"] = "target"
    factor: float = Field(default=0.5, ge=0, le=1, description="harm to the shielded is multiplied by this")


class StatArgs(Strict):
    name: str
    delta: Amount
    who: Who = Who.ACTOR


class TrustArgs(Strict):
    target: float = Field(default=0.0, ge=-2, le=2, description="the target's trust in the actor")
    actor: float = Field(default=0.0, ge=-2, le=2, description="the actor's trust in the target")
    bystanders: float = Field(default=0.0, ge=-2, le=2, description="others at the actor's place, in the actor")
    everyone: float = Field(default=0.0, ge=-2, le=2, description="every other agent's trust in the actor")
    mutual: float | None = Field(
        default=None, ge=-2, le=2, description="if the target chose the same action at the actor: both ways"
    )


class DeltaArgs(Strict):
    delta: Amount


class TallyArgs(DeltaArgs):
    who: Who = Field(default=Who.ACTOR, description="whose tally: the actor's (default), the target's, all…")


class ClockArgs(DeltaArgs):
    name: str | None = Field(default=None, description="one of clocks: (default: the world's clock)")


class PoolArgs(Strict):
    name: str
    delta: Amount


class HarvestArgs(Strict):
    pool: str
    amount: PositiveAmount = Field(description="what the actor takes, at most what the pool holds")
    into: str | None = Field(default=None, description="a stat of the actor's that receives the catch")
    tally: bool = Field(default=True, description="the catch counts towards the actor's tally")


class RelationArgs(Strict):
    name: str = Field(description="one of relations:, or trust")
    delta: Amount
    between: tuple[Literal["actor", "target"], Literal["actor", "target"]] = Field(
        default=("actor", "target"), description="whose relation to whom: [actor, target] is the actor's to the target"
    )


class TransferArgs(Strict):
    stat: str
    amount: PositiveAmount = Field(description="at most what the giver can spare")
    to: Literal["actor", "target"] = Field(default="target", description="who receives; the other one gives")


class PostArgs(Strict):
    text: str | None = Field(default=None, description="a template; default: the decision's text, else its speech")
    topic: str | None = Field(default=None, description="one of feed.topics, whose spread is counted")


class VoteArgs(Strict):
    side: Literal["aye", "nay"]


class OfferArgs(Strict):
    give: dict[str, Amount] = Field(min_length=1, description="stat -> what the actor gives")
    get: dict[str, Amount] = Field(min_length=1, description="stat -> what the actor asks of the target")


class BumpArgs(Strict):
    amount: float


class EndArgs(Strict):
    outcome: str


class ChanceArgs(Strict):
    p: float = Field(ge=0, le=1)
    stat: str | None = Field(default=None, description="the actor's stat that raises the chance")
    per_point: float = Field(default=0.0, description="chance added per point of that stat")
    then: list[Effect] = Field(default_factory=list)
    otherwise: list[Effect] = Field(default_factory=list)
    text: str | None = Field(default=None, description="replaces the action's text when the chance succeeds")
    else_text: str | None = Field(default=None, description="replaces the action's text when it fails")


# -------------------------------------------------------------------------------------------- the checking


@dataclass(frozen=True)
class EffectCheck:
    """Where one effect is written, for its `check`: the field path of its arguments, the place of use, the
    action's target kind and reach, and the agents its expressions may name."""

    checker: _Checker
    here: str  # e.g. actions[3].effects[0].harm
    context: str
    target: TargetKind
    reach: Reach
    roles: tuple[str, ...]

    def known(self, field: str, kind: str, value: str, options: Any) -> None:
        known(f"{self.here}.{field}" if field else self.here, kind, value, options)

    def fail(self, field: str, expected: str) -> None:
        raise Problem(f"{self.here}.{field}" if field else self.here, expected)

    def need(self, kind: TargetKind, why: str) -> None:
        if self.target is not kind:
            self.fail("", f"{why}; expected the action to have target: {kind.value}")

    def agent_target(self, field: str = "") -> None:
        """The effect acts on the decision's target agent (or the pair's second)."""
        if not (self.target is TargetKind.AGENT or "target" in self.roles):
            self.fail(field, "needs an agent target; expected the action's target: agent")

    def stat(self, field: str, name: str) -> None:
        self.known(field, "stat", name, self.checker.spec.stats)


# ---------------------------------------------------------------------------------------------- the effects


class EffectRule(Strict):
    """One effect: a mapping with one key (its name) whose value is its arguments."""

    places: ClassVar[frozenset[str]] = EVERYWHERE
    item: ClassVar[str | None] = None  # the kind of item (post, motion, offer) a `target: item` action aims at
    section: ClassVar[str | None] = None  # the top-level section of the world it needs (feed, votes, trade)

    @property
    def key(self) -> str:
        return next(iter(type(self).model_fields))

    @property
    def args(self) -> Any:
        return getattr(self, self.key)

    def expressions(self) -> dict[str, str]:
        """The expressions it computes its amounts with, by field (a chance's branches compute theirs when
        drawn)."""
        return {name: v for name in ("amount", "delta") if isinstance(v := getattr(self.args, name, None), str)}

    def nested(self) -> list[Effect]:
        """Effects it may run in turn (a chance's branches)."""
        return []

    once: ClassVar[bool] = False  # its pressure counts once per action, however often the action lists it
    wants_holding: ClassVar[bool | None] = None  # agent targets it needs: holding something (True), or any

    @abstractmethod
    def apply(self, r: Round, ctx: _Ctx) -> None:
        """Carry it out in the round's working copy, for the action (or rule) `ctx` describes."""

    def check(self, c: EffectCheck) -> None:
        """Raise Problem for what it names that the world lacks, or a use its place does not allow."""

    def prepare(self, r: Round, actor: str, decision: Decision) -> None:
        """Before any action of the round is carried out (shields are raised, claims gathered for contests)."""

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        """Whether what it needs is missing now, so that its action is not offered (nothing to deliver, an
        empty pool)."""
        return False

    def fits(self, w: Compiled, state: KitState, agent: str, objective: str) -> bool | None:
        """Whether an objective is a fitting target for its action now (None: it has no say)."""
        return None

    def pressure(self, p: Pressing) -> float:
        """How much it presses its action now (docs/worlds-kit.md, "Pressures")."""
        return 0.0


class Move(EffectRule):
    move: MoveArgs
    places = ACTS
    once = True

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        return self.move.to is not None and self.move.to == state.agents[agent].at

    def pressure(self, p: Pressing) -> float:
        return 0.3 if p.aim_target in p.option.targets else 0.0

    def apply(self, r: Round, ctx: _Ctx) -> None:
        destination = self.move.to or ctx.decision.target
        here = r.where[ctx.actor]
        if destination and here and destination != here:
            r.moves[ctx.actor] = (destination, r.w.travel_time(r.start, here, destination, ctx.decl.reach))
            ctx.values["destination"] = destination

    def check(self, c: EffectCheck) -> None:
        if self.move.to is not None:
            c.known("to", "location", self.move.to, c.checker.w.locations)
            return
        c.need(TargetKind.LOCATION, "moves to the action's target")
        if c.reach is Reach.HERE:
            raise Problem(
                c.here.rsplit(".", 1)[0], "a move with reach: here goes nowhere; expected reach: edge or anywhere"
            )


class _OnObjective(EffectRule):
    """An effect on an objective: a fixed one, or the decision's target."""

    places = ACTS

    def check(self, c: EffectCheck) -> None:
        objective = self.args.objective
        if objective is not None:
            c.known("objective", "objective", objective, c.checker.w.objectives)
        elif not isinstance(self, Deliver):
            c.need(TargetKind.OBJECTIVE, f"{self.key} acts on the action's target")
        if not c.checker.w.objectives:
            c.fail("", "the world has no objectives; expected objectives: first")


class Claim(_OnObjective):
    claim: ObjectiveArgs
    once = True

    def prepare(self, r: Round, actor: str, decision: Decision) -> None:
        objective = self.claim.objective or decision.target
        if objective is not None and actor not in r.claimants.get(objective, []):
            r.claimants.setdefault(objective, []).append(actor)

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        fixed = self.claim.objective
        return fixed is not None and (
            not w.claimable(state, fixed) or state.objectives[fixed].at != state.agents[agent].at
        )

    def fits(self, w: Compiled, state: KitState, agent: str, objective: str) -> bool | None:
        return w.claimable(state, objective)

    def pressure(self, p: Pressing) -> float:
        return 0.4 + (0.4 if p.seeks in p.option.targets else 0.0)

    def apply(self, r: Round, ctx: _Ctx) -> None:
        objective = self.claim.objective or ctx.objective
        if objective is None:
            return
        obj = r.s.objectives[objective]
        if objective in r.contests:
            winner, rivals = r.contests[objective]
            if winner != ctx.actor:
                others = ", ".join(x for x in rivals if x != ctx.actor)
                r.transition(ctx, objective, Transition.CONTESTED, winner, winner=winner or "nobody", rivals=others)
                return
        if not r.w.claimable(r.s, objective):
            ctx.sentences.append(
                f"{ctx.actor} reached for the {objective}, but it was already {r.w.word(objective, obj.status)}."
            )
            return
        kind = r.w.kind(objective)
        chance = kind.chance + (
            kind.per_point * r.s.agents[ctx.actor].stats[kind.chance_stat] if kind.chance_stat else 0
        )
        if chance < 1 and r.rng.random() >= max(0.0, chance):
            r.transition(ctx, objective, Transition.SOUGHT, None)
            return
        was = obj.status
        if kind.mode == "in_place":
            obj.status, obj.by = Status.LIT, ctx.actor
            r.transition(ctx, objective, Transition.RELIT if was is Status.DOUSED else Transition.LIT, None)
        else:
            obj.status, obj.by, obj.at = Status.HELD, ctx.actor, None
            r.transition(ctx, objective, Transition.CLAIMED, None)


class Deliver(_OnObjective):
    deliver: ObjectiveArgs
    once = True

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        fixed = self.deliver.objective
        if fixed is not None:
            return not w.deliverable(state, agent, fixed)
        if decl.target is TargetKind.NONE:
            return not any(w.deliverable(state, agent, o) for o in state.held_by(agent))
        return False

    def fits(self, w: Compiled, state: KitState, agent: str, objective: str) -> bool | None:
        return w.deliverable(state, agent, objective)

    def pressure(self, p: Pressing) -> float:
        return 0.8

    def apply(self, r: Round, ctx: _Ctx) -> None:
        fixed = self.deliver.objective
        names = [fixed] if fixed else [o for o in r.s.held_by(ctx.actor) if r.w.deliverable(r.s, ctx.actor, o)]
        if ctx.objective and not fixed:
            names = [ctx.objective] if r.w.deliverable(r.s, ctx.actor, ctx.objective) else []
        names = [n for n in names if r.w.deliverable(r.s, ctx.actor, n)]
        if not names:
            ctx.sentences.append(f"{ctx.actor} had nothing to deliver at {ctx.location}.")
            return
        for name in names:
            obj = r.s.objectives[name]
            obj.status, obj.at, obj.by = Status.DELIVERED, r.where[ctx.actor], ctx.actor
            r.transition(ctx, name, Transition.DELIVERED, None)


def _gone(state: KitState, fixed: str | None) -> bool:
    """A fixed objective already lost or delivered: nothing is left to act on."""
    return fixed is not None and state.objectives[fixed].status in (Status.LOST, Status.DELIVERED)


class Douse(_OnObjective):
    douse: DouseArgs

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        return _gone(state, self.douse.objective)

    def fits(self, w: Compiled, state: KitState, agent: str, objective: str) -> bool | None:
        obj = state.objectives[objective]
        return obj.status is Status.LIT and obj.by != agent  # rivals put out what others lit

    def apply(self, r: Round, ctx: _Ctx) -> None:
        objective = self.douse.objective or ctx.objective
        if objective is None:
            return
        obj = r.s.objectives[objective]
        if obj.status is not Status.LIT:
            ctx.sentences.append(f"{ctx.actor} went for the {objective}, but it was {r.w.word(objective, obj.status)}.")
            return
        if self.douse.chance < 1 and r.rng.random() >= self.douse.chance:
            ctx.sentences.append(f"{ctx.actor} tried to undo the {objective} and failed.")
            return
        previous = obj.by
        obj.status, obj.by = Status.DOUSED, None
        r.transition(ctx, objective, Transition.DOUSED, previous)


class Lose(_OnObjective):
    lose: ObjectiveArgs

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        return _gone(state, self.lose.objective)

    def apply(self, r: Round, ctx: _Ctx) -> None:
        name = self.lose.objective or ctx.objective
        if name and r.s.objectives[name].status not in (Status.LOST, Status.DELIVERED):
            obj = r.s.objectives[name]
            previous = obj.by
            obj.status, obj.at, obj.by = Status.LOST, None, None
            r.transition(ctx, name, Transition.LOST, previous)


class Take(EffectRule):
    take: TakeArgs
    places = ACTS
    wants_holding = True

    def apply(self, r: Round, ctx: _Ctx) -> None:
        victim = ctx.target
        if victim is None:
            return
        held = r.s.held_by(victim)
        if not held:
            ctx.sentences.append(f"{victim} had nothing to take.")
            return
        if self.take.chance < 1 and r.rng.random() >= self.take.chance:
            ctx.sentences.append(f"{ctx.actor} tried to take the {held[0]} from {victim} and failed.")
            return
        r.s.objectives[held[0]].by = ctx.actor
        r.transition(ctx, held[0], Transition.TAKEN, victim)

    def check(self, c: EffectCheck) -> None:
        c.need(TargetKind.AGENT, "takes from the action's target")


class _OnStat(EffectRule):
    """An effect on one stat of the agents `who` names."""

    def stat_name(self) -> str | None:
        return self.args.stat

    def check(self, c: EffectCheck) -> None:
        spec, name, who = c.checker.spec, self.stat_name(), self.args.who
        field = "name" if isinstance(self, StatChange) else "stat"
        if name is None and spec.stats and c.checker.w.vital is None:
            c.fail("stat", "no vital stat to default to; expected a stat name")
        if name is None and not spec.stats:
            c.fail("", "the world has no stats; expected stats: first")
        if name is not None:
            c.stat(field, name)
        if "actor" not in c.roles and who is not Who.ALL:
            place = "threshold" if c.context == THRESHOLD else "rule of the whole world"
            c.fail("who", f"{who.value!r}; a {place} has no actor, expected who: all")
        if who is Who.TARGET and c.context in (AGENT, WORLD) and "target" not in c.roles:
            c.fail("who", f"{who.value!r}; there is no target here, expected actor or all")
        if who is Who.TARGET and c.context == ACTION and c.target is not TargetKind.AGENT:
            c.fail("who", "needs an agent target; expected the action's target: agent")


class Harm(_OnStat):
    harm: AmountArgs

    def apply(self, r: Round, ctx: _Ctx) -> None:
        stat = self.harm.stat or r.w.vital or ""
        amount = max(0.0, r.amount(ctx, self.harm.amount))
        for agent in r.who(ctx, self.harm.who):
            if r.s.agents[agent].fallen:
                continue
            done = -r.set_stat(agent, stat, r.s.agents[agent].stats[stat] - amount * r.shields.get(agent, 1.0))
            ctx.values["harm"] = done
            r.maybe_fall(ctx, agent, ctx.actor)
            if agent != ctx.actor and agent not in ctx.involved:
                ctx.involved.append(agent)


class Heal(_OnStat):
    heal: AmountArgs

    def pressure(self, p: Pressing) -> float:
        if not p.vital or (self.heal.stat or p.vital) != p.vital:
            return 0.0
        if self.heal.who in (Who.ACTOR, Who.EVERYONE_HERE):
            return p.hurt
        if p.option.target is TargetKind.AGENT and p.option.targets:
            return 0.6 * p.most_hurt(p.option.targets)
        return 0.0

    def apply(self, r: Round, ctx: _Ctx) -> None:
        stat = self.heal.stat or r.w.vital or ""
        amount = max(0.0, r.amount(ctx, self.heal.amount))
        for agent in r.who(ctx, self.heal.who):
            if r.s.agents[agent].fallen:
                continue
            ctx.values["heal"] = r.set_stat(agent, stat, r.s.agents[agent].stats[stat] + amount)
            if agent != ctx.actor and agent not in ctx.involved:
                ctx.involved.append(agent)


class StatChange(_OnStat):
    stat: StatArgs

    def stat_name(self) -> str | None:
        return self.stat.name

    def pressure(self, p: Pressing) -> float:
        if self.stat.name != p.vital or self.stat.who is not Who.ACTOR:
            return 0.0
        sign = p.sign(self.stat.delta)
        return 0.0 if sign is None else p.hurt if sign > 0 else -p.hurt

    def apply(self, r: Round, ctx: _Ctx) -> None:
        delta = r.amount(ctx, self.stat.delta)
        for agent in r.who(ctx, self.stat.who):
            if not r.s.agents[agent].fallen:
                changed = r.set_stat(agent, self.stat.name, r.s.agents[agent].stats[self.stat.name] + delta)
                ctx.values["amount"] = abs(changed)
                r.maybe_fall(ctx, agent, ctx.actor)


class Shield(EffectRule):
    shield: ShieldArgs
    places = ACTS

    def prepare(self, r: Round, actor: str, decision: Decision) -> None:
        who = actor if self.shield.who == "actor" else decision.target
        if who is not None:
            r.shields[who] = min(r.shields.get(who, 1.0), self.shield.factor)

    def apply(self, r: Round, ctx: _Ctx) -> None:
        """Raised before any action was carried out (`prepare`): nothing is left to do."""

    def check(self, c: EffectCheck) -> None:
        if self.shield.who == "target" and c.target is not TargetKind.AGENT:
            c.fail("who", "needs an agent target; expected the action's target: agent")


class TrustChange(EffectRule):
    trust: TrustArgs
    places = frozenset({ACTION, TRANSITION})

    def apply(self, r: Round, ctx: _Ctx) -> None:
        args, s, actor, target = self.trust, r.s, ctx.actor, ctx.target
        if target is not None:
            theirs = r.valid.get(target)
            mutual = (
                args.mutual is not None
                and theirs is not None
                and theirs.action == ctx.decision.action
                and theirs.target == actor
            )
            if mutual:
                assert args.mutual is not None
                s.adjust_trust(target, actor, args.mutual)
                s.adjust_trust(actor, target, args.mutual)
            else:
                s.adjust_trust(target, actor, args.target)
                s.adjust_trust(actor, target, args.actor)
        for bystander in r.audience(actor, ctx.location):
            if bystander not in (actor, target):
                s.adjust_trust(bystander, actor, args.bystanders)
        if args.everyone:  # a pass over the society only where it changes every agent's trust
            for other in s.agents:
                s.adjust_trust(other, actor, args.everyone)

    def check(self, c: EffectCheck) -> None:
        t = self.trust
        if (t.target or t.actor or t.mutual) and c.context == ACTION and c.target is not TargetKind.AGENT:
            c.fail("", "target/actor/mutual trust need a target agent; expected target: agent")
        if t.mutual is not None and c.context != ACTION:
            c.fail("mutual", f"mutual offers need a decision; not in a {c.context}")


class ClockChange(EffectRule):
    clock: ClockArgs

    def apply(self, r: Round, ctx: _Ctx) -> None:
        r.add_clock(r.amount(ctx, self.clock.delta), self.clock.name)

    def pressure(self, p: Pressing) -> float:
        """Turning the world's clock back presses the more, the nearer it is to its end; forward, the less."""
        if self.clock.name is not None:
            return 0.0
        rise = p.sign(self.clock.delta) or 0.0
        return (0.8 if rise < 0 else 0.5) * -rise * p.urgency**2

    def check(self, c: EffectCheck) -> None:
        if self.clock.name is not None:
            c.known("name", "clock", self.clock.name, c.checker.spec.clocks)
        elif c.checker.spec.clock is None:
            c.fail("", "the world has no clock; expected a clock: section first")


class PoolChange(EffectRule):
    pool: PoolArgs

    def apply(self, r: Round, ctx: _Ctx) -> None:
        ctx.values["amount"] = abs(r.add_pool(self.pool.name, r.amount(ctx, self.pool.delta)))

    def pressure(self, p: Pressing) -> float:
        sign = p.sign(self.pool.delta)
        return 0.0 if sign is None else p.scarce.get(self.pool.name, 0.0) * (1 if sign > 0 else -1)

    def check(self, c: EffectCheck) -> None:
        c.known("name", "pool", self.pool.name, c.checker.spec.pools)


class Harvest(EffectRule):
    harvest: HarvestArgs
    places = ACTS

    def blocks(self, w: Compiled, state: KitState, agent: str, decl: ActionDecl) -> bool:
        return state.pools[self.harvest.pool] <= w.spec.pools[self.harvest.pool].min

    def pressure(self, p: Pressing) -> float:
        return -p.scarce.get(self.harvest.pool, 0.0)

    def apply(self, r: Round, ctx: _Ctx) -> None:
        args, me = self.harvest, r.s.agents[ctx.actor]
        caught = -r.add_pool(args.pool, -max(0.0, r.amount(ctx, args.amount)))
        if args.into:
            r.set_stat(ctx.actor, args.into, me.stats[args.into] + caught)
        if args.tally:
            me.tally = round(me.tally + caught, 4)
        ctx.values["caught"] = caught

    def check(self, c: EffectCheck) -> None:
        c.known("pool", "pool", self.harvest.pool, c.checker.spec.pools)
        if self.harvest.into is not None:
            c.stat("into", self.harvest.into)


class RelationChange(EffectRule):
    relation: RelationArgs
    places = frozenset({ACTION, TRANSITION, PAIR})

    def apply(self, r: Round, ctx: _Ctx) -> None:
        roles = {"actor": ctx.actor, "target": ctx.target}
        holder, other = roles[self.relation.between[0]], roles[self.relation.between[1]]
        if holder and other:
            changed = r.add_relation(self.relation.name, holder, other, r.amount(ctx, self.relation.delta))
            ctx.values["amount"] = abs(changed)

    def check(self, c: EffectCheck) -> None:
        from amphoreus_graph.worlds.kit.scope import TRUST

        c.known("name", "relation", self.relation.name, [*c.checker.spec.relations, TRUST])
        if "target" in self.relation.between:
            c.agent_target("between")
        if self.relation.between[0] == self.relation.between[1]:
            c.fail("between", "an agent's relation to itself; expected [actor, target] or [target, actor]")


class Transfer(EffectRule):
    transfer: TransferArgs
    places = frozenset({ACTION, TRANSITION, PAIR})

    def apply(self, r: Round, ctx: _Ctx) -> None:
        """Move a stat from one agent to the other: no more than the giver can spare, nor than the receiver can
        hold (what is left stays with the giver), so a trade never makes or destroys anything."""
        args = self.transfer
        if ctx.target is None:
            return
        giver, receiver = (ctx.actor, ctx.target) if args.to == "target" else (ctx.target, ctx.actor)
        spec, stats = r.w.spec.stats[args.stat], r.s.agents
        spare, room = stats[giver].stats[args.stat] - spec.min, spec.max - stats[receiver].stats[args.stat]
        moved = round(max(0.0, min(r.amount(ctx, args.amount), spare, room)), 4)
        if moved:
            r.set_stat(giver, args.stat, stats[giver].stats[args.stat] - moved)
            r.set_stat(receiver, args.stat, stats[receiver].stats[args.stat] + moved)
            r.maybe_fall(ctx, giver, None)
        ctx.values["amount"] = moved

    def check(self, c: EffectCheck) -> None:
        c.stat("stat", self.transfer.stat)
        c.agent_target()


class TallyChange(EffectRule):
    tally: TallyArgs
    places = frozenset({ACTION, TRANSITION, AGENT, PAIR})

    def apply(self, r: Round, ctx: _Ctx) -> None:
        delta = r.amount(ctx, self.tally.delta)
        for agent in r.who(ctx, self.tally.who):
            me = r.s.agents[agent]
            me.tally = round(me.tally + delta, 4)

    def check(self, c: EffectCheck) -> None:
        if self.tally.who is Who.TARGET:
            c.agent_target("who")


class Bump(EffectRule):
    bump: BumpArgs
    places = frozenset({ACTION, TRANSITION})

    def apply(self, r: Round, ctx: _Ctx) -> None:
        ctx.bump += self.bump.amount


class Announce(EffectRule):
    announce: NoArgs
    places = ACTS

    def apply(self, r: Round, ctx: _Ctx) -> None:
        ctx.public = True


class End(EffectRule):
    end: EndArgs

    def apply(self, r: Round, ctx: _Ctx) -> None:
        r.end(self.end.outcome)

    def check(self, c: EffectCheck) -> None:
        c.checker._ending_ref(f"{c.here}.outcome", self.end.outcome)


class Chance(EffectRule):
    chance: ChanceArgs
    places = EVERYWHERE - {THRESHOLD}

    def nested(self) -> list[Effect]:
        return [*self.chance.then, *self.chance.otherwise]

    def apply(self, r: Round, ctx: _Ctx) -> None:
        branch = self.chance
        p = branch.p + (branch.per_point * r.s.agents[ctx.actor].stats[branch.stat] if branch.stat else 0.0)
        if r.rng.random() < max(0.0, min(1.0, p)):
            ctx.lead = branch.text or ctx.lead
            r.run_effects(ctx, branch.then)
        else:
            ctx.lead = branch.else_text or ctx.lead
            r.run_effects(ctx, branch.otherwise)

    def check(self, c: EffectCheck) -> None:
        from amphoreus_graph.worlds.kit.compiled import ACTION_VARS
        from amphoreus_graph.worlds.kit.texts import check_template

        args = self.chance
        if args.stat is not None:
            c.stat("stat", args.stat)
        for key in ("text", "else_text"):
            text = getattr(args, key)
            if text is not None and (problem := check_template(text, c.checker.stakes | ACTION_VARS)):
                c.fail(key, problem)
        for branch in ("then", "otherwise"):
            c.checker._effects(
                f"{c.here}.{branch}",
                getattr(args, branch),
                context=c.context,
                target=c.target,
                reach=c.reach,
                roles=c.roles,
            )


# ------------------------------------------------------------------------------------------- social effects


class _Social(EffectRule):
    """An agent's deed on a feed, a vote or a trade: it needs its section of the world, and a decision."""

    places = ACTS

    def check(self, c: EffectCheck) -> None:
        if getattr(c.checker.spec, self.section or "") is None:
            c.fail("", f"needs a {self.section}: section; expected one declared at the top of the world")
        if self.item is not None and c.target is not TargetKind.ITEM:
            c.fail("", f"acts on a {self.item} the decision names; expected target: item")
        topic = getattr(self.args, "topic", None)
        if topic is not None and c.checker.spec.feed is not None:
            c.known("topic", "topic", topic, c.checker.spec.feed.topics)


class PostEffect(_Social):
    post: PostArgs
    section = "feed"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.post(r, ctx, self.post)


class Reply(_Social):
    reply: PostArgs
    section, item = "feed", "post"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.reply(r, ctx, self.reply)


class Repost(_Social):
    repost: NoArgs
    section, item = "feed", "post"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.repost(r, ctx)


class Like(_Social):
    like: NoArgs
    section, item = "feed", "post"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.like(r, ctx)


class Propose(_Social):
    propose: NoArgs
    section = "votes"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.propose(r, ctx)


class Vote(_Social):
    vote: VoteArgs
    section, item = "votes", "motion"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.vote(r, ctx, self.vote.side)


class OfferEffect(_Social):
    offer: OfferArgs
    section = "trade"

    def expressions(self) -> dict[str, str]:
        sides = {"give": self.offer.give, "get": self.offer.get}
        return {
            f"{side}.{stat}": v for side, amounts in sides.items() for stat, v in amounts.items() if isinstance(v, str)
        }

    def apply(self, r: Round, ctx: _Ctx) -> None:
        give = {stat: round(r.amount(ctx, v), 4) for stat, v in self.offer.give.items()}
        get = {stat: round(r.amount(ctx, v), 4) for stat, v in self.offer.get.items()}
        social.offer(r, ctx, give, get)

    def check(self, c: EffectCheck) -> None:
        super().check(c)
        if c.target is not TargetKind.AGENT:
            c.fail("", "offers to the decision's target; expected target: agent")
        for side in ("give", "get"):
            for stat, amount in getattr(self.offer, side).items():
                c.stat(f"{side}.{stat}", stat)
                if not isinstance(amount, str) and amount <= 0:
                    c.fail(f"{side}.{stat}", f"{amount}; expected an amount above 0")


class Accept(_Social):
    accept: NoArgs
    section, item = "trade", "offer"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.accept(r, ctx)


class Decline(_Social):
    decline: NoArgs
    section, item = "trade", "offer"

    def apply(self, r: Round, ctx: _Ctx) -> None:
        social.decline(r, ctx)


EFFECTS: dict[str, type[EffectRule]] = {
    "move": Move,
    "claim": Claim,
    "deliver": Deliver,
    "douse": Douse,
    "lose": Lose,
    "take": Take,
    "harm": Harm,
    "heal": Heal,
    "shield": Shield,
    "stat": StatChange,
    "trust": TrustChange,
    "clock": ClockChange,
    "pool": PoolChange,
    "harvest": Harvest,
    "relation": RelationChange,
    "transfer": Transfer,
    "post": PostEffect,
    "reply": Reply,
    "repost": Repost,
    "like": Like,
    "propose": Propose,
    "vote": Vote,
    "offer": OfferEffect,
    "accept": Accept,
    "decline": Decline,
    "tally": TallyChange,
    "bump": Bump,
    "announce": Announce,
    "end": End,
    "chance": Chance,
}
# A scalar after an effect's key fills this field: `harm: 2` is `harm: {amount: 2}`.
SHORTHAND: dict[str, str] = {
    "move": "to",
    "claim": "objective",
    "deliver": "objective",
    "douse": "objective",
    "lose": "objective",
    "take": "chance",
    "harm": "amount",
    "heal": "amount",
    "shield": "factor",
    "clock": "delta",
    "tally": "delta",
    "bump": "amount",
    "end": "outcome",
    "vote": "side",
}


def _effect_key(value: Any) -> str | None:
    if isinstance(value, dict) and len(value) == 1:
        key = next(iter(value))
        return key if key in EFFECTS else None
    if isinstance(value, BaseModel):
        return next(iter(type(value).model_fields))
    return None


def _normalise(value: Any) -> Any:
    """`- move` is `{move: {}}`, `{harm: 2}` is `{harm: {amount: 2}}`, `{claim: null}` is `{claim: {}}`."""
    if isinstance(value, str) and value in EFFECTS:
        return {value: {}}
    if isinstance(value, dict) and len(value) == 1:
        key, args = next(iter(value.items()))
        if args is None:
            return {key: {}}
        if key in SHORTHAND and not isinstance(args, dict | list):
            return {key: {SHORTHAND[key]: args}}
    return value


_Tagged = Annotated[
    Annotated[Move, Tag("move")]
    | Annotated[Claim, Tag("claim")]
    | Annotated[Deliver, Tag("deliver")]
    | Annotated[Douse, Tag("douse")]
    | Annotated[Lose, Tag("lose")]
    | Annotated[Take, Tag("take")]
    | Annotated[Harm, Tag("harm")]
    | Annotated[Heal, Tag("heal")]
    | Annotated[Shield, Tag("shield")]
    | Annotated[StatChange, Tag("stat")]
    | Annotated[TrustChange, Tag("trust")]
    | Annotated[ClockChange, Tag("clock")]
    | Annotated[PoolChange, Tag("pool")]
    | Annotated[Harvest, Tag("harvest")]
    | Annotated[RelationChange, Tag("relation")]
    | Annotated[Transfer, Tag("transfer")]
    | Annotated[PostEffect, Tag("post")]
    | Annotated[Reply, Tag("reply")]
    | Annotated[Repost, Tag("repost")]
    | Annotated[Like, Tag("like")]
    | Annotated[Propose, Tag("propose")]
    | Annotated[Vote, Tag("vote")]
    | Annotated[OfferEffect, Tag("offer")]
    | Annotated[Accept, Tag("accept")]
    | Annotated[Decline, Tag("decline")]
    | Annotated[TallyChange, Tag("tally")]
    | Annotated[Bump, Tag("bump")]
    | Annotated[Announce, Tag("announce")]
    | Annotated[End, Tag("end")]
    | Annotated[Chance, Tag("chance")],
    Discriminator(
        _effect_key,
        custom_error_type="effect",
        custom_error_message=f"expected one effect: a mapping with one key from [{', '.join(EFFECTS)}]",
    ),
]
Effect = Annotated[_Tagged, BeforeValidator(_normalise)]
ChanceArgs.model_rebuild()


def item_kind(effects: list[Effect]) -> str | None:
    """The kind of item (post, motion, offer) an action's effects act on, if any."""
    return next((e.item for e in effects if e.item is not None), None)


def walk(effects: list[Effect]) -> list[Effect]:
    """Every effect, nested chance branches included."""
    return [found for effect in effects for found in (effect, *walk(effect.nested()))]
