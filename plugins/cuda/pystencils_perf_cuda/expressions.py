"""CUDA-like index expressions and guards as sympy, read with Python's `ast` (never evaluated).

``blockIdx.x * blockDim.x + threadIdx.x``, ``y * n + x`` with named indices and
constants, ``x < n && y < n`` for guards. Integer division and remainder are
allowed between constants only: of a thread index they are not affine. A block
condition (`parse_block_condition`, Kernel Tuner's ``#if`` on the block size)
may also divide by ``blockDim`` and join comparisons with ``||``; so may a number of the block
(`parse_block_expression`, e.g. shared memory per block).
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field

import sympy as sp
from pystencils_perf.errors import HarvestError
from pystencils_perf.kernel import BDIM, BID, TID

_THREAD = {"threadIdx": TID, "blockIdx": BID, "blockDim": BDIM}
_AXES = {"x": 0, "y": 1, "z": 2}
_ACCESS = re.compile(r"^\s*([A-Za-z_]\w*)\s*(\[.*\])\s*$", re.S)
_COMPARE = {ast.Lt: sp.Lt, ast.LtE: sp.Le, ast.Gt: sp.Gt, ast.GtE: sp.Ge, ast.Eq: sp.Eq, ast.NotEq: sp.Ne}


@dataclass
class Scope:
    """The names an expression may use: constants, loop counters and named index expressions."""

    constants: dict[str, int] = field(default_factory=dict)
    loops: dict[str, sp.Symbol] = field(default_factory=dict)
    indices: dict[str, str] = field(default_factory=dict)
    _parsed: dict[str, sp.Expr] = field(default_factory=dict)
    _open: list[str] = field(default_factory=list)

    def name(self, name: str, where: str) -> sp.Expr:
        if name in self.constants:
            return sp.Integer(self.constants[name])
        if name in self.loops:
            return self.loops[name]
        if name in self.indices:
            if name in self._open:
                raise HarvestError(
                    f"{where}: index {name!r} is defined through itself ({' -> '.join(self._open + [name])})"
                )
            if name not in self._parsed:
                self._open.append(name)
                self._parsed[name] = parse(self.indices[name], self, f"{where}: index {name!r}")
                self._open.pop()
            return self._parsed[name]
        if name in _THREAD:
            raise HarvestError(f"{where}: write {name}.x, {name}.y or {name}.z")
        known = sorted(self.constants) + sorted(self.loops) + sorted(self.indices)
        raise HarvestError(
            f"{where}: unknown name {name!r} (known: {', '.join(known) or 'none'}; and threadIdx, blockIdx, blockDim)"
        )


def _c_to_python(text: str) -> str:
    return text.replace("&&", " and ").replace("||", " or ")


def _tree(text: str, where: str) -> ast.expr:
    if not isinstance(text, str) or not text.strip():
        raise HarvestError(f"{where}: expected an expression, got {text!r}")
    try:
        return ast.parse(_c_to_python(text).strip(), mode="eval").body
    except SyntaxError:
        raise HarvestError(f"{where}: cannot parse it") from None


def parse(text: str, scope: Scope, where: str) -> sp.Expr:
    """An integer expression or a guard (comparisons joined by ``and``/``&&``) as sympy."""
    where = f"{where}: {text!r}"
    return _Converter(scope, where).convert(_tree(text, where))


def parse_block_expression(text: str, scope: Scope, where: str) -> sp.Expr:
    """A number of ``blockDim`` and constants, e.g. shared memory per block, which may divide and take remainders
    of ``blockDim`` (a padding that depends on the block's width): no index, so it need not be affine."""
    where = f"{where}: {text!r}"
    return _Converter(scope, where, block_condition=True).convert(_tree(text, where))


def parse_block_condition(text: str, scope: Scope, where: str) -> sp.Basic:
    """A condition on ``blockDim`` and constants, e.g. ``4096 % (blockDim.x * 3) != 0 || 4096 % blockDim.y != 0``."""
    where = f"{where}: {text!r}"
    condition = _Converter(scope, where, block_condition=True).convert(_tree(text, where))
    if not isinstance(condition, sp.logic.boolalg.Boolean):
        raise HarvestError(f"{where} is no condition")
    if condition.free_symbols - set(BDIM):
        raise HarvestError(
            f"{where}: may depend on blockDim and constants only, not on "
            f"{', '.join(sorted(map(str, condition.free_symbols - set(BDIM))))}"
        )
    return condition


#: accesses parsed before, by their text and the names of their scope: a tiled kernel's variants (read_only on
#: and off, say) repeat hundreds of the same loads
_PARSED_ACCESSES: dict[tuple, tuple[str, tuple[sp.Expr, ...]]] = {}


def parse_access(text: str, scope: Scope, where: str) -> tuple[str, tuple[sp.Expr, ...]]:
    """``name[i][j]`` or ``name[i, j]`` -> (name, index expressions); `where` names the access."""
    key = (
        (
            text,
            tuple(sorted(scope.constants.items())),
            tuple(sorted(scope.loops.items())),
            tuple(sorted(scope.indices.items())),
        )
        if isinstance(text, str)
        else None
    )
    if key in _PARSED_ACCESSES:
        return _PARSED_ACCESSES[key]
    parsed = _parse_access(text, scope, where)
    if len(_PARSED_ACCESSES) >= 65536:
        _PARSED_ACCESSES.clear()
    _PARSED_ACCESSES[key] = parsed
    return parsed


def _parse_access(text: str, scope: Scope, where: str) -> tuple[str, tuple[sp.Expr, ...]]:
    match = _ACCESS.match(text) if isinstance(text, str) else None
    if not match:
        raise HarvestError(f"{where}: not of the form name[index] or name[i][j]")
    name, brackets = match.groups()
    node = _tree("_" + brackets, where)
    indices = []
    while isinstance(node, ast.Subscript):
        inner = node.slice
        indices[:0] = inner.elts if isinstance(inner, ast.Tuple) else [inner]
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "_"):
        raise HarvestError(f"{where}: not of the form name[index] or name[i][j]")
    converter = _Converter(scope, where)
    return name, tuple(converter.convert(i) for i in indices)


class _Converter:
    def __init__(self, scope: Scope, where: str, block_condition: bool = False):
        self.scope, self.where, self.block_condition = scope, where, block_condition

    def fail(self, what: str):
        raise HarvestError(f"{self.where}: {what}")

    def convert(self, node: ast.AST):
        method = getattr(self, f"_{type(node).__name__}", None)
        if method is None:
            self.fail(f"unsupported {ast.unparse(node)!r} ({type(node).__name__})")
        return method(node)

    def _Constant(self, node):
        if type(node.value) is not int:
            self.fail(f"{node.value!r} is not an integer")
        return sp.Integer(node.value)

    def _Name(self, node):
        return self.scope.name(node.id, self.where)

    def _Attribute(self, node):
        if isinstance(node.value, ast.Name) and node.value.id in _THREAD and node.attr in _AXES:
            return _THREAD[node.value.id][_AXES[node.attr]]
        if isinstance(node.value, ast.Name) and node.value.id == "gridDim":
            self.fail("gridDim is not modelled: the grid follows from the threads and the block (use the sizes)")
        self.fail(f"unknown {ast.unparse(node)!r}; use threadIdx, blockIdx or blockDim .x/.y/.z")

    def _UnaryOp(self, node):
        operand = self.convert(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.UAdd):
            return operand
        self.fail(f"unsupported operator in {ast.unparse(node)!r}")

    def _BinOp(self, node):
        a, b = self.convert(node.left), self.convert(node.right)
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        if (
            isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod))
            and self.block_condition
            and not (a.is_Integer and b.is_Integer)
        ):
            return sp.Mod(a, b) if isinstance(node.op, ast.Mod) else sp.floor(a / b)  # positive block sizes
        if isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Mod)):
            if not (a.is_Integer and b.is_Integer) or b == 0:
                self.fail(f"{ast.unparse(node)!r}: integer division or remainder of a non-constant is not affine")
            x, y = int(a), int(b)
            q = abs(x) // abs(y) * (1 if (x >= 0) == (y > 0) else -1)  # C integer division truncates
            return sp.Integer(x - y * q if isinstance(node.op, ast.Mod) else q)
        self.fail(f"unsupported operator in {ast.unparse(node)!r}")

    def _Compare(self, node):
        terms = [self.convert(node.left)] + [self.convert(c) for c in node.comparators]
        relations = [_COMPARE[type(op)](lhs, rhs) for op, lhs, rhs in zip(node.ops, terms, terms[1:])]
        return sp.And(*relations)

    def _BoolOp(self, node):
        if isinstance(node.op, ast.Or) and self.block_condition:
            return sp.Or(*(self.convert(v) for v in node.values))
        if not isinstance(node.op, ast.And):
            self.fail("a guard must be comparisons joined by 'and' / '&&'")
        return sp.And(*(self.convert(v) for v in node.values))
