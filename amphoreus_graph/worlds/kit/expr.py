"""The kit's expression language: conditions and computed quantities a world's YAML writes as text.

    actor.coin >= pool.price                      an affordability condition
    sum(debt[actor, agents]) > actor.coin         what an agent owes, against what it has
    pool.ayes > pool.nays and round >= 4          a vote decided by a deadline
    actor.coin + actor.grain * pool.price - sum(debt[actor, agents])     a net worth

Python's own syntax, parsed by `ast` and rebuilt from a small whitelist of node types into typed nodes: nothing
is ever handed to `eval`. Names are checked against the world when it loads (`Expr.check`), so a misspelt stat
is one error line there, not a failure in round 7. Values are numbers; `agents.X` and a relation indexed by
`agents` are vectors over the standing agents (in the world's order), which `sum`, `count`, `mean`, `min` and
`max` reduce; arithmetic and comparisons apply element-wise, a number broadcasting. Comparisons, `and`, `or`
and `not` give 1 or 0, so `count(agents.coin < 5)` counts the poor. See docs/worlds-kit.md, "Expressions".
"""

from __future__ import annotations

import ast
import math
import operator
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

Value = float | tuple[float, ...]
ROLES = ("actor", "target")  # the agents an expression may name: the one acting (or in focus) and its target
SCALARS = ("round", "rounds", "standing", "fallen")


class ExprError(ValueError):
    """An expression the world cannot use, said in one line."""


@dataclass(frozen=True)
class Names:
    """What a world lets its expressions name (checked at load), and which roles the place of use binds."""

    stats: frozenset[str] = frozenset()
    pools: frozenset[str] = frozenset()
    clocks: frozenset[str] = frozenset()  # named clocks; "" is the world's main clock, if it has one
    relations: frozenset[str] = frozenset()
    statuses: frozenset[str] = frozenset()
    here: frozenset[str] = frozenset()  # what `here.X` may say, where a place is bound (a director's event)
    topics: frozenset[str] = frozenset()  # a feed's topics: reach.X (agents reached), posts.X (posts about it)
    roles: frozenset[str] = frozenset()  # which of actor/target are bound where the expression is used
    agents: frozenset[str] = frozenset()  # the world's agents, who may be named: agent["Ada Holt"]
    agent_fields: frozenset[str] = frozenset({"tally", "holding"})


class Env(Protocol):
    """What an expression reads when it is evaluated: a state, with the roles of its place of use bound."""

    def scalar(self, name: str) -> float: ...
    def agent(self, role: str) -> str: ...
    def standing(self) -> Sequence[str]: ...
    def field(self, agent: str, name: str) -> float: ...
    def pool(self, name: str) -> float: ...
    def clock(self, name: str) -> float: ...
    def relation(self, name: str, holder: str, other: str) -> float: ...
    def objectives(self, status: str) -> float: ...
    def here(self, name: str) -> float: ...
    def reach(self, topic: str) -> float: ...
    def posts(self, topic: str) -> float: ...


class Node(ABC):
    @abstractmethod
    def value(self, env: Env) -> Value: ...

    @abstractmethod
    def check(self, names: Names) -> bool:
        """Raise ExprError for a name the world lacks; True when the node is a vector."""


def _vector(values: Value, size: int) -> tuple[float, ...]:
    return values if isinstance(values, tuple) else (values,) * size


def _apply(op: Callable[[float, float], float], left: Value, right: Value) -> Value:
    if isinstance(left, tuple) or isinstance(right, tuple):
        size = len(left) if isinstance(left, tuple) else len(right)  # type: ignore[arg-type]
        return tuple(op(a, b) for a, b in zip(_vector(left, size), _vector(right, size), strict=True))
    return op(left, right)


def _truth(value: Value) -> bool:
    if isinstance(value, tuple):
        raise ExprError("a list of agents' values is not true or false; expected count(...), sum(...), min or max")
    return bool(value)


@dataclass(frozen=True)
class Number(Node):
    number: float

    def value(self, env: Env) -> Value:
        return self.number

    def check(self, names: Names) -> bool:
        return False


@dataclass(frozen=True)
class Scalar(Node):
    """round, rounds (the cycle's length), standing, fallen (counts of agents), clock (the main clock)."""

    name: str

    def value(self, env: Env) -> Value:
        return env.clock("") if self.name == "clock" else env.scalar(self.name)

    def check(self, names: Names) -> bool:
        if self.name == "clock" and "" not in names.clocks:
            raise ExprError("the world has no clock; expected a clock: section, or clock.NAME of clocks:")
        return False


@dataclass(frozen=True)
class Named(Node):
    """pool.X, clock.X, objectives.STATUS, here.X, reach.TOPIC, posts.TOPIC: one number of the world's."""

    space: str
    name: str

    def value(self, env: Env) -> Value:
        read: Callable[[str], float] = getattr(env, self.space)  # each space is the Env method of its name
        return read(self.name)

    def check(self, names: Names) -> bool:
        known = {
            "pool": names.pools,
            "clock": names.clocks - {""},
            "objectives": names.statuses,
            "here": names.here,
            "reach": names.topics,
            "posts": names.topics,
        }[self.space]
        if self.name not in known:
            where = "" if known else f" (the world has no {self.space} to name here)"
            raise ExprError(f"unknown {self.space} {self.name!a}{where}; expected one of {sorted(known)}")
        return False


@dataclass(frozen=True)
class Everyone(Node):
    """agents alone: 1 per standing agent, so `count(agents)` is how many stand."""

    def value(self, env: Env) -> Value:
        return tuple(1.0 for _ in env.standing())

    def check(self, names: Names) -> bool:
        return True


@dataclass(frozen=True)
class AgentRef:
    """An agent an expression names: a role bound where it is used (`actor`, `target`), one agent by name
    (`agent["Ada Holt"]`), or every standing agent (`agents`, a vector)."""

    kind: str  # role, named or agents
    value: str = ""

    def __str__(self) -> str:
        return f"agent[{self.value!r}]" if self.kind == "named" else self.value or "agents"

    @property
    def many(self) -> bool:
        return self.kind == "agents"

    def one(self, env: Env) -> str:
        return env.agent(self.value) if self.kind == "role" else self.value

    def check(self, names: Names) -> None:
        if self.kind == "role" and self.value not in names.roles:
            bound = f"; expected one of {sorted(names.roles)} or agents" if names.roles else "; expected agents"
            raise ExprError(f"no {self.value} here{bound}")
        if self.kind == "named" and self.value not in names.agents:
            raise ExprError(f"unknown agent {self.value!a}; expected one of {sorted(names.agents)}")


EVERYONE = AgentRef("agents")


@dataclass(frozen=True)
class AgentField(Node):
    """actor.X / target.X / agent["Name"].X (one agent's stat, tally or holding count); agents.X (every
    standing agent's)."""

    who: AgentRef
    name: str

    def value(self, env: Env) -> Value:
        if self.who.many:
            return tuple(env.field(a, self.name) for a in env.standing())
        return env.field(self.who.one(env), self.name)

    def check(self, names: Names) -> bool:
        self.who.check(names)
        known = names.stats | names.agent_fields
        if self.name not in known:
            raise ExprError(f"unknown stat {self.name!a} of {self.who}; expected one of {sorted(known)}")
        return self.who.many


@dataclass(frozen=True)
class Relation(Node):
    """REL[a, b]: how far a stands to b (a's debt to b, a follows b, a's trust in b); `agents` on one side
    gives the vector over the standing agents (an agent's relation to itself is 0)."""

    name: str
    holder: AgentRef
    other: AgentRef

    def value(self, env: Env) -> Value:
        if self.holder.many:
            other = self.other.one(env)
            return tuple(env.relation(self.name, a, other) if a != other else 0.0 for a in env.standing())
        holder = self.holder.one(env)
        if self.other.many:
            return tuple(env.relation(self.name, holder, a) if a != holder else 0.0 for a in env.standing())
        other = self.other.one(env)
        return env.relation(self.name, holder, other) if holder != other else 0.0

    def check(self, names: Names) -> bool:
        if self.name not in names.relations:
            raise ExprError(f"unknown relation {self.name!a}; expected one of {sorted(names.relations)}")
        self.holder.check(names)
        self.other.check(names)
        if self.holder.many and self.other.many:
            raise ExprError(f"{self.name}[agents, agents] is a table, not a number; expected one side to be an agent")
        return self.holder.many or self.other.many


_BINARY: dict[type, Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: lambda a, b: a / b if b else 0.0,
    ast.Mod: lambda a, b: math.fmod(a, b) if b else 0.0,
}
_COMPARE: dict[type, Callable[[float, float], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}


@dataclass(frozen=True)
class Binary(Node):
    """+ - * / % (a division or remainder by 0 is 0: a world's arithmetic never raises mid-round)."""

    op: type
    left: Node
    right: Node

    def value(self, env: Env) -> Value:
        return _apply(_BINARY[self.op], self.left.value(env), self.right.value(env))

    def check(self, names: Names) -> bool:
        return self.left.check(names) | self.right.check(names)


@dataclass(frozen=True)
class Negate(Node):
    operand: Node

    def value(self, env: Env) -> Value:
        return _apply(operator.sub, 0.0, self.operand.value(env))

    def check(self, names: Names) -> bool:
        return self.operand.check(names)


def _comparison(op: type) -> Callable[[float, float], float]:
    test = _COMPARE[op]
    return lambda a, b: float(test(a, b))


@dataclass(frozen=True)
class Compare(Node):
    """a < b <= c: 1 where every link holds, else 0."""

    first: Node
    links: tuple[tuple[type, Node], ...]

    def value(self, env: Env) -> Value:
        left = self.first.value(env)
        result: Value = 1.0
        for op, node in self.links:
            right = node.value(env)
            held = _apply(_comparison(op), left, right)
            result = _apply(min, result, held)
            left = right
        return result

    def check(self, names: Names) -> bool:
        vector = self.first.check(names)
        for _, node in self.links:
            vector |= node.check(names)
        return vector


@dataclass(frozen=True)
class Logic(Node):
    """and / or over numbers (short-circuit, like Python's), giving 1 or 0."""

    both: bool
    parts: tuple[Node, ...]

    def value(self, env: Env) -> Value:
        if self.both:
            return float(all(_truth(p.value(env)) for p in self.parts))
        return float(any(_truth(p.value(env)) for p in self.parts))

    def check(self, names: Names) -> bool:
        for part in self.parts:
            if part.check(names):
                raise ExprError("and/or join true-or-false tests, not a list of agents' values; expected count(...)")
        return False


@dataclass(frozen=True)
class Not(Node):
    operand: Node

    def value(self, env: Env) -> Value:
        return float(not _truth(self.operand.value(env)))

    def check(self, names: Names) -> bool:
        if self.operand.check(names):
            raise ExprError("not applies to a test, not a list of agents' values; expected count(...) == 0")
        return False


@dataclass(frozen=True)
class Choose(Node):
    """a if test else b."""

    test: Node
    then: Node
    otherwise: Node

    def value(self, env: Env) -> Value:
        return self.then.value(env) if _truth(self.test.value(env)) else self.otherwise.value(env)

    def check(self, names: Names) -> bool:
        if self.test.check(names):
            raise ExprError("an if needs one true-or-false test, not a list of agents' values")
        return self.then.check(names) | self.otherwise.check(names)


def _reduce(name: str, values: tuple[float, ...]) -> float:
    if name == "count":
        return float(sum(1 for v in values if v))
    if name == "sum":
        return float(math.fsum(values))
    if name == "prod":
        return float(math.prod(values))
    if not values:
        return 0.0
    if name == "mean":
        return math.fsum(values) / len(values)
    return min(values) if name == "min" else max(values)


@dataclass(frozen=True)
class Call(Node):
    """sum/prod/count/mean of a vector; min/max of a vector or of several numbers; abs of one."""

    name: str
    args: tuple[Node, ...]

    def value(self, env: Env) -> Value:
        values = [a.value(env) for a in self.args]
        if self.name == "abs":
            return _apply(lambda a, _: abs(a), values[0], 0.0)
        if len(values) == 1:
            only = values[0]
            return _reduce(self.name, only if isinstance(only, tuple) else (only,))
        result = values[0]
        pick = min if self.name == "min" else max
        for other in values[1:]:
            result = _apply(pick, result, other)
        return result

    def check(self, names: Names) -> bool:
        vectors = [a.check(names) for a in self.args]
        if self.name in ("sum", "prod", "count", "mean"):
            if len(self.args) != 1:
                raise ExprError(f"{self.name}() takes one list of agents' values, got {len(self.args)} arguments")
            return False
        if self.name == "abs":
            if len(self.args) != 1:
                raise ExprError(f"abs() takes one number, got {len(self.args)} arguments")
            return vectors[0]
        if not self.args:
            raise ExprError(f"{self.name}() needs something to compare")
        return len(self.args) > 1 and any(vectors)


FUNCTIONS = ("sum", "prod", "count", "mean", "min", "max", "abs")
SPACES = ("pool", "clock", "objectives", "here", "reach", "posts")


def _side(node: ast.AST) -> AgentRef:
    """One agent of a relation or a stat: actor, target, agents, or a name in quotes."""
    if isinstance(node, ast.Name) and node.id in ROLES:
        return AgentRef("role", node.id)
    if isinstance(node, ast.Name) and node.id == "agents":
        return EVERYONE
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return AgentRef("named", node.value)
    raise ExprError(f"{ast.unparse(node)!r} is no agent; expected actor, target, agents or a name in quotes")


def _named(node: ast.Subscript) -> AgentRef:
    """agent["Ada Holt"]: one agent by name."""
    if isinstance(node.value, ast.Name) and node.value.id == "agent":
        return _side(node.slice)
    raise ExprError(f'{ast.unparse(node)!r} is not part of the expression language; expected agent["Name"].stat')


def _build(node: ast.AST) -> Node:
    """The typed node for one piece of Python syntax on the whitelist (ExprError for anything else)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float):
        return Number(float(node.value))
    if isinstance(node, ast.Name):
        if node.id in (*SCALARS, "clock"):
            return Scalar(node.id)
        if node.id == "agents":
            return Everyone()
        raise ExprError(f"unknown name {node.id!a}; expected a number, {', '.join(SCALARS)}, clock or X.Y")
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Subscript):
        return AgentField(_named(node.value), node.attr)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        space, name = node.value.id, node.attr
        if space in (*ROLES, "agents"):
            return AgentField(_side(node.value), name)
        if space in SPACES:
            return Named(space, name)
        raise ExprError(f"unknown {space}.{name}; expected actor., target., agents., {'., '.join(SPACES)}.")
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        pair = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(pair) != 2:
            raise ExprError(f"{node.value.id}[...] needs two agents; expected {node.value.id}[actor, target]")
        return Relation(node.value.id, _side(pair[0]), _side(pair[1]))
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        return Binary(type(node.op), _build(node.left), _build(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd | ast.Not):
        inner = _build(node.operand)
        return Not(inner) if isinstance(node.op, ast.Not) else Negate(inner) if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.Compare) and all(type(op) in _COMPARE for op in node.ops):
        return Compare(
            _build(node.left), tuple((type(op), _build(c)) for op, c in zip(node.ops, node.comparators, strict=True))
        )
    if isinstance(node, ast.BoolOp):
        return Logic(isinstance(node.op, ast.And), tuple(_build(v) for v in node.values))
    if isinstance(node, ast.IfExp):
        return Choose(_build(node.test), _build(node.body), _build(node.orelse))
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.keywords:
        if node.func.id not in FUNCTIONS:
            raise ExprError(f"unknown function {node.func.id!a}; expected one of {list(FUNCTIONS)}")
        return Call(node.func.id, tuple(_build(a) for a in node.args))
    raise ExprError(f"{ast.unparse(node)!r} is not part of the expression language (docs/worlds-kit.md)")


@dataclass(frozen=True)
class Expr:
    """One expression as the YAML wrote it, parsed once."""

    text: str
    root: Node = field(compare=False, repr=False)

    @classmethod
    def parse(cls, text: str) -> Expr:
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as error:
            raise ExprError(f"{text!r} does not parse ({error.msg}, column {error.offset})") from None
        return cls(text=text, root=_build(tree.body))

    def check(self, names: Names, *, number: bool = True) -> None:
        """Raise ExprError for a name the world lacks, or a list of values where one number is expected."""
        if self.root.check(names) and number:
            raise ExprError(f"{self.text!r} gives one value per agent; expected one number (wrap it in sum/count/...)")

    def number(self, env: Env) -> float:
        value = self.root.value(env)
        if isinstance(value, tuple):  # check() refused this at load
            raise ExprError(f"{self.text!r} gave a list of values; expected one number")
        return value if math.isfinite(value) else 0.0

    def holds(self, env: Env) -> bool:
        return bool(self.number(env))
