"""Print the module import graph of pystencils_perf and check its layers; exit 1 on a violation.

Layers (a module may import its own layer and those below it):

    facade     pystencils_perf (the package's public names), pystencils_perf.cli
    generator  pystencils_perf.adapters.*, pystencils_perf.catalog.*   (pystencils/lbmpy-specific)
    core       kernel, launch, metrics, devices, estimate, predict, rank, plugins, ... (generator-neutral)

Checked: no import cycle among modules (imports inside functions and those only for type checkers count
too), no core module imports the generator
layer, pystencils or lbmpy, and no generator module imports the facade.

Within the core, the plugin contract has rooms of its own (`check_plugin_rooms`): the modules whose types the
hooks exchange (what `hookspecs` imports for its annotations) implement no hook and import neither a plugin
module nor the pipeline; a plugin module (one with an ``@hookimpl``) does not import the pipeline (`rank`); and
the only core modules that ask the plugin manager are the pipeline, `spec` (reading a SPEC file is an input a
plugin may read, `perf_load_spec`) and plugins themselves (a plugin may ask the others, as the estimator asks
for their footprint backends). Run from anywhere: ``python3 tools/import_graph.py [--edges]``.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGE = "pystencils_perf"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE
GENERATORS = ("pystencils", "lbmpy")
FACADE = (PACKAGE, f"{PACKAGE}.cli")
#: the pipeline: the one module that runs the hooks in order
PIPELINE = f"{PACKAGE}.rank"
#: the plugin manager's module, and the core modules besides the pipeline and the plugins that may ask it
PLUGIN_MANAGER = f"{PACKAGE}.plugins"
ASKS_PLUGINS = (PIPELINE, f"{PACKAGE}.spec")
GENERATOR_LAYER = (f"{PACKAGE}.adapters", f"{PACKAGE}.catalog")


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, modules: set[str], type_checking_too: bool = False) -> tuple[set[str], set[str]]:
    """(package modules, external top-level packages) that `path` imports, anywhere in the file; with
    `type_checking_too` also those it imports only for type checkers (``if TYPE_CHECKING:``)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    internal, external = set(), set()
    tree = ast.parse(path.read_text(), str(path))
    type_checking = {
        id(n)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and _is_type_checking(block.test)
        for stmt in block.body
        for n in ast.walk(stmt)
    }
    for node in ast.walk(tree):
        if id(node) in type_checking and not type_checking_too:
            continue
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                prefix = ".".join(base + ([node.module] if node.module else []))
            else:
                prefix = node.module or ""
            targets = [f"{prefix}.{a.name}" for a in node.names]
        else:
            continue
        for target in targets:
            if target.split(".")[0] != PACKAGE:
                external.add(target.split(".")[0])
                continue
            while target and target not in modules:  # `from .x import name` names a module or an attribute
                target = target.rpartition(".")[0]
            if target and target != name:
                internal.add(target)
    return internal, external


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def layer(module: str) -> str:
    if module in FACADE:
        return "facade"
    if module.startswith(GENERATOR_LAYER):
        return "generator"
    return "core"


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (a list of modules, first == last), or None."""
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt) :] + [nxt]
            if nxt not in state:
                found = visit(nxt)
                if found:
                    return found
        stack.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state:
            found = visit(node)
            if found:
                return found
    return None


def check() -> tuple[dict[str, set[str]], list[str]]:
    files = sorted(ROOT.rglob("*.py"))
    modules = {module_name(p) for p in files}
    graph, problems = {}, []
    for path in files:
        name = module_name(path)
        internal, external = imports_of(path, modules)
        # a package's __init__ re-exporting its submodules is not a dependency of those submodules on it
        graph[name] = {m for m in internal if not (path.name == "__init__.py" and m.startswith(name + "."))}
        for m in sorted(internal):
            if layer(name) == "core" and layer(m) != "core":
                problems.append(f"core module {name} imports {layer(m)} module {m}")
            if layer(name) == "generator" and layer(m) == "facade":
                problems.append(f"generator module {name} imports facade module {m}")
        if layer(name) == "core":
            for pkg in sorted(external & set(GENERATORS)):
                problems.append(f"core module {name} imports the generator {pkg}")
    # a cycle through annotations' imports is a circle of modules too: each needs the others to be read
    with_types = {
        module_name(p): {
            m
            for m in imports_of(p, modules, type_checking_too=True)[0]
            if not (p.name == "__init__.py" and m.startswith(module_name(p) + "."))
        }
        for p in files
    }
    cycle = find_cycle(with_types)
    if cycle:
        problems.append("import cycle: " + " -> ".join(cycle))
    return graph, problems + check_plugin_rooms(graph, {module_name(p): p for p in files})


def hook_types(hookspecs: Path, modules: set[str]) -> set[str]:
    """The modules `hookspecs` imports its annotations' types from (inside ``if TYPE_CHECKING:``)."""
    found = set()
    for block in ast.walk(ast.parse(hookspecs.read_text())):
        if isinstance(block, ast.If) and _is_type_checking(block.test):
            for node in ast.walk(block):
                if isinstance(node, ast.ImportFrom) and node.level == 1 and f"{PACKAGE}.{node.module}" in modules:
                    found.add(f"{PACKAGE}.{node.module}")
    return found


def implements_hooks(path: Path) -> bool:
    """Whether the module at `path` implements a hook (a function decorated ``@hookimpl`` or ``@hookimpl(...)``)."""
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.FunctionDef):
            for deco in node.decorator_list:
                target = deco.func if isinstance(deco, ast.Call) else deco
                if isinstance(target, ast.Name) and target.id == "hookimpl":
                    return True
    return False


def check_plugin_rooms(graph: dict[str, set[str]], paths: dict[str, Path]) -> list[str]:
    """The rooms of the plugin contract (module docstring): types, plugins, the pipeline."""
    types = hook_types(paths[f"{PACKAGE}.hookspecs"], set(paths)) - {PIPELINE}
    plugins = {m for m, path in paths.items() if layer(m) == "core" and implements_hooks(path)}
    problems = [f"module {m}, whose types the hooks exchange, implements a hook" for m in sorted(types & plugins)]
    if PIPELINE in plugins:
        problems.append(f"the pipeline {PIPELINE} implements a hook")
    for name in sorted(graph):
        if layer(name) != "core":
            continue
        for m in sorted(graph[name]):
            if name in types and (m in plugins or m in (PIPELINE, PLUGIN_MANAGER)):
                problems.append(f"type module {name} imports {m}, a room above it")
            if name in plugins and m == PIPELINE:
                problems.append(f"plugin module {name} imports the pipeline {m}")
            if m == PLUGIN_MANAGER and name not in (*ASKS_PLUGINS, *plugins):
                problems.append(f"core module {name} asks the plugin manager ({m}): only {PIPELINE} does")
    return problems


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", action="store_true", help="print every module and what it imports")
    args = parser.parse_args(argv)
    graph, problems = check()
    if args.edges:
        for name in sorted(graph):
            print(f"{name}: {', '.join(sorted(graph[name])) or '-'}")
    counts = {name: sum(layer(m) == name for m in graph) for name in ("core", "generator", "facade")}
    print(
        f"{len(graph)} modules ({', '.join(f'{n} {k}' for k, n in counts.items())}), "
        f"{sum(map(len, graph.values()))} imports, {len(problems)} problems"
    )
    for p in problems:
        print(f"  {p}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
