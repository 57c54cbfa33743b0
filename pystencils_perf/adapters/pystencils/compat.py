"""The pystencils internals this adapter relies on, in one place, checked per supported version.

pystencils 2.x has no public hook to replace a kernel's GPU indexing or its
axes factory, so thread folding overrides two private methods of
``DefaultKernelCreationDriver``; harvesting for interior alignment reads the
names pystencils gives its iteration counters. A pystencils release that
changes either fails here, with its version in the message, instead of
generating wrong code somewhere else.
"""

from __future__ import annotations

from importlib.metadata import version

from ...errors import ConfigurationError

#: pystencils minor versions this adapter is tested with (CI runs both)
SUPPORTED_VERSIONS = ("2.0", "2.1")
#: private methods of ``DefaultKernelCreationDriver`` that `driver_with` overrides
DRIVER_METHODS = ("_get_gpu_indexing", "_get_axes_factory")
#: what the driver's state is called: the creation context and the configuration
DRIVER_ATTRIBUTES = ("_ctx", "_cfg")


def pystencils_version() -> str:
    """The installed pystencils' major.minor version."""
    return ".".join(version("pystencils").split(".")[:2])


def counter_name(axis: int) -> str:
    """The name pystencils 2.x gives the iteration counter of spatial axis `axis` (slowest last)."""
    return f"ctr_{axis}"


def check_driver() -> type:
    """pystencils' ``DefaultKernelCreationDriver``, if it still has the methods `driver_with` overrides."""
    from pystencils.codegen.driver import DefaultKernelCreationDriver

    missing = [m for m in DRIVER_METHODS if not callable(getattr(DefaultKernelCreationDriver, m, None))]
    if missing:
        raise ConfigurationError(
            f"pystencils {pystencils_version()} lacks {', '.join(missing)} of DefaultKernelCreationDriver, which thread "
            f"folding overrides; pystencils-perf supports pystencils {' and '.join(SUPPORTED_VERSIONS)}"
        )
    return DefaultKernelCreationDriver


def driver_with(cfg, make_indexing, make_axes):
    """pystencils' kernel creation driver with its GPU indexing and its axes factory replaced.

    :param make_indexing: ``(ctx, cfg) -> indexing`` (what ``_get_gpu_indexing`` returns).
    :param make_axes: ``ctx -> axes factory`` (what ``_get_axes_factory`` returns).
    """
    base = check_driver()

    class OverridingDriver(base):
        def _get_gpu_indexing(self):
            return make_indexing(self._ctx, self._cfg)

        def _get_axes_factory(self):
            return make_axes(self._ctx)

    driver = OverridingDriver(cfg)
    missing = [a for a in DRIVER_ATTRIBUTES if not hasattr(driver, a)]
    if missing:
        raise ConfigurationError(
            f"pystencils {pystencils_version()}'s kernel creation driver has no {', '.join(missing)}; "
            f"pystencils-perf supports pystencils {' and '.join(SUPPORTED_VERSIONS)}"
        )
    return driver
