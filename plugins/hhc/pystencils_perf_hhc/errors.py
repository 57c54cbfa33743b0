"""Errors of the HHC model: bad tile sizes, problems or stencils, named in one line."""

from pystencils_perf.errors import ConfigurationError, HarvestError


class TileError(ConfigurationError):
    """A tile size or problem the model cannot evaluate (odd t_T, wrong rank, tile too large for shared memory)."""


class StencilError(HarvestError):
    """Assignments that are not a single first-order Jacobi-type stencil the HHC model describes."""
