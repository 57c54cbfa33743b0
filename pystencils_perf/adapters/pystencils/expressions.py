"""pystencils backend expressions (integer addresses and guards) as sympy over the model's thread symbols."""

from __future__ import annotations

import sympy as sp

from ...errors import HarvestError
from ...kernel import BDIM, BID, TID

_THREAD_LITERALS = {
    f"{cuda}.{axis}": sym
    for cuda, syms in (("threadIdx", TID), ("blockIdx", BID), ("blockDim", BDIM))
    for axis, sym in zip("xyz", syms)
}


def ps_to_sympy(node, symbol, where: str, describe_load=None) -> sp.Expr:
    """An integer or boolean PsExpression as sympy.

    `symbol(name, where)` gives the value of a symbol; CUDA index literals become
    the thread symbols; a load in an address (`describe_load(node)` names it) is an error.
    """
    from pystencils.backend.ast import expressions as ex

    def conv(n):
        return ps_to_sympy(n, symbol, where, describe_load)

    match node:
        case ex.PsConstantExpr():
            return sp.sympify(node.constant.value)
        case ex.PsLiteralExpr():
            text = node.literal.text
            if text in _THREAD_LITERALS:
                return _THREAD_LITERALS[text]
            raise HarvestError(f"{where}: unsupported literal {text!r} in an address (gridDim or similar)")
        case ex.PsSymbolExpr():
            return symbol(node.symbol.name, where)
        case ex.PsCast():
            return conv(node.operand)
        case ex.PsNeg():
            return -conv(node.operand)
        case ex.PsAdd():
            return conv(node.operand1) + conv(node.operand2)
        case ex.PsSub():
            return conv(node.operand1) - conv(node.operand2)
        case ex.PsMul():
            return conv(node.operand1) * conv(node.operand2)
        case ex.PsIntDiv():
            return _c_div(conv(node.operand1), conv(node.operand2))
        case ex.PsRem():
            a, b = conv(node.operand1), conv(node.operand2)
            return a - b * _c_div(a, b)
        case ex.PsMemAcc() | ex.PsBufferAcc():
            what = describe_load(node) if describe_load else "a field"
            raise HarvestError(f"{where}: indirect (data-dependent) address through a load of {what}")
        case ex.PsLt() | ex.PsLe() | ex.PsGt() | ex.PsGe() | ex.PsEq() | ex.PsNe():
            rel = {ex.PsLt: sp.Lt, ex.PsLe: sp.Le, ex.PsGt: sp.Gt, ex.PsGe: sp.Ge, ex.PsEq: sp.Eq, ex.PsNe: sp.Ne}
            return rel[type(node)](conv(node.operand1), conv(node.operand2))
        case ex.PsAnd():
            return sp.And(conv(node.operand1), conv(node.operand2))
        case ex.PsOr():
            return sp.Or(conv(node.operand1), conv(node.operand2))
        case ex.PsNot():
            return sp.Not(conv(node.operand))
    raise HarvestError(f"{where}: unsupported {type(node).__name__} in an address or guard")


def _c_div(a: sp.Expr, b: sp.Expr) -> sp.Expr:
    """C integer division; exact when both are integers, else kept symbolic (non-affine)."""
    if a.is_Integer and b.is_Integer:
        q = abs(int(a)) // abs(int(b))
        return sp.Integer(q if (int(a) >= 0) == (int(b) > 0) else -q)
    return sp.Function("c_div")(a, b)
