"""The plugin manager: hook specs from `hookspecs`, plugins from entry points.

Built-in plugins are listed in this distribution's own ``pystencils_perf``
entry-point group, so they are found exactly like third-party ones; the core
never imports an adapter or a model by name. Run from a source tree without
installing, the same list is read from this project's ``pyproject.toml``.

A plugin is blocked by its entry-point name, like pytest's ``-p no:NAME``:
``PYSTENCILS_PERF_BLOCK=name1,name2`` in the environment, or
``pystencils-perf --block-plugin NAME``.
"""

from __future__ import annotations

import functools
import importlib
import importlib.metadata
import os
import tomllib
from pathlib import Path

import pluggy

from . import hookspecs
from .errors import PerfError

BLOCK_ENV = "PYSTENCILS_PERF_BLOCK"
_PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def blocked_names() -> tuple[str, ...]:
    """Entry-point names blocked through the environment."""
    return tuple(sorted(n.strip() for n in os.environ.get(BLOCK_ENV, "").split(",") if n.strip()))


def _source_tree_builtins() -> dict[str, str]:
    """The built-in plugins as the source tree's pyproject.toml lists them (name -> module)."""
    try:
        with open(_PYPROJECT, "rb") as fh:
            project = tomllib.load(fh)["project"]
        return dict(project["entry-points"][hookspecs.PROJECT_NAME])
    except (OSError, KeyError, tomllib.TOMLDecodeError):
        return {}


def installed_plugins() -> dict[str, str]:
    """Entry-point name -> what it loads (``module`` or ``module:object``), of every installed plugin, blocked or not."""
    found = {ep.name: ep.value for ep in importlib.metadata.entry_points(group=hookspecs.PROJECT_NAME)}
    return {**_source_tree_builtins(), **found}


#: built-in plugins every ranking needs, and what for: blocking one is refused, since nothing could rank
CORE_PLUGINS = {
    "estimator": "it estimates every candidate's metrics",
    "select": "it chooses the candidate a ranking applies",
}


def check_block_names(names, source: str = "--block-plugin") -> None:
    """Refuse to block a name no installed plugin has (a misspelt name would block nothing, silently), or a core
    plugin (`CORE_PLUGINS`); `source` says where the names came from, in the message."""
    installed = installed_plugins()
    for name in names:
        if name not in installed:
            raise PerfError(
                f"{source} {name}: no installed plugin has that name; installed: {', '.join(sorted(installed))}"
            )
        if name in CORE_PLUGINS:
            raise PerfError(f"{source} {name}: a core plugin cannot be blocked ({CORE_PLUGINS[name]})")


def blocked_adapters() -> list[str]:
    """The blocked plugins that describe kernels (`perf_harvest`), for the message when no adapter is left."""
    installed = installed_plugins()
    adapters = []
    for name in blocked_names():
        try:
            plugin = importlib.metadata.EntryPoint(name, installed[name], hookspecs.PROJECT_NAME).load()
        except Exception:  # not installed, or broken: what blocking it may have been for
            continue
        if hasattr(plugin, "perf_harvest"):
            adapters.append(name)
    return adapters


def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager with every installed plugin that is not blocked."""
    blocked = blocked_names()
    _check_blocked_by_environment(blocked)
    return _plugin_manager(blocked)


@functools.cache
def _check_blocked_by_environment(blocked: tuple[str, ...]) -> None:
    """`check_block_names` for the names the environment blocks, once per set of names."""
    check_block_names(blocked, f"{BLOCK_ENV}:")


@functools.cache
def _plugin_manager(blocked: tuple[str, ...]) -> pluggy.PluginManager:
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    for name in blocked:
        pm.set_blocked(name)
    pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
    for name, module in _source_tree_builtins().items():
        if not pm.is_blocked(name) and pm.get_plugin(name) is None:
            pm.register(importlib.import_module(module), name)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as e:
        raise PerfError(f"plugin {e.plugin!r}: {e} (misspelt hook? see pystencils_perf/hookspecs.py)") from None
    return pm
