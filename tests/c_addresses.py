"""An independent reading of pystencils' generated C code: the index of every
``_data_F[...]`` access, evaluated at concrete thread and block indices.

Used to check the AST-based harvester against the text the compiler sees.
"""

import re

_DECL = re.compile(r"const int64_t (\w+) = (.*);")
_ACCESS = re.compile(r"_data_(\w+)\[")


def _c_to_python(expr: str) -> str:
    expr = re.sub(r"\(\s*int64_t\s*\)", "", expr)
    expr = re.sub(r"(\d+)LL\b", r"\1", expr)
    return expr.replace("/", "//")


def _bracket_contents(code: str, start: int) -> tuple[str, int]:
    depth, i = 1, start
    while depth:
        depth += {"[": 1, "]": -1}.get(code[i], 0)
        i += 1
    return code[start : i - 1], i


def accesses_at(code: str, tid, bid, bdim):
    """{(field, kind): sorted element indices} of one thread, read from the C code."""
    env = {}
    for axis, t, b, d in zip("xyz", tid, bid, bdim):
        env[f"threadIdx_{axis}"], env[f"blockIdx_{axis}"], env[f"blockDim_{axis}"] = t, b, d

    def evaluate(expr):
        py = _c_to_python(expr)
        for name in ("threadIdx", "blockIdx", "blockDim"):
            py = py.replace(f"{name}.", f"{name}_")
        return eval(py, {}, env)  # noqa: S307 - test helper on generated code

    body = code[code.index("{") :]
    for name, expr in _DECL.findall(body):
        try:
            env[name] = evaluate(expr)
        except NameError:
            pass  # not an index declaration
    found = {}
    for m in _ACCESS.finditer(body):
        index, end = _bracket_contents(body, m.end())
        rest = body[end:].lstrip()
        kind = "store" if rest.startswith("=") and not rest.startswith("==") else "load"
        found.setdefault((m.group(1), kind), set()).add(evaluate(index))
    return {k: sorted(v) for k, v in found.items()}
