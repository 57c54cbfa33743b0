"""The plugin manager: hook specs from `hookspecs`, plugins from entry points.

Built-in plugins are listed in this distribution's own ``pystencils_perf``
entry-point group, so they are found exactly like third-party ones; the core
never imports an adapter or a model by name.
"""

from __future__ import annotations

import functools

import pluggy

from . import hookspecs


@functools.cache
def get_plugin_manager() -> pluggy.PluginManager:
    """The process-wide plugin manager with every installed plugin registered."""
    pm = pluggy.PluginManager(hookspecs.PROJECT_NAME)
    pm.add_hookspecs(hookspecs)
    pm.load_setuptools_entrypoints(hookspecs.PROJECT_NAME)
    if not pm.hook.perf_predict.get_hookimpls():
        raise RuntimeError(
            "pystencils-perf's built-in plugins were not found through entry points; "
            "install the package (`pip install -e .`) instead of importing it from a source tree"
        )
    return pm
