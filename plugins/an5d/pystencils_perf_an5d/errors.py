"""AN5D's input errors: one line naming the stencil, device or parameter at fault."""

from pystencils_perf.errors import ConfigurationError, DeviceError, PerfError


class An5dError(PerfError):
    """Base class of the AN5D plugin's input errors."""


class StencilShapeError(An5dError):
    """A stencil AN5D's model does not describe: neither star nor full box, radius 0, more than one store."""


class An5dDeviceError(An5dError, DeviceError):
    """A device that is not in AN5D's device table, or a malformed table."""


class An5dParameterError(An5dError, ConfigurationError):
    """An invalid b_T, b_S, h_SN, precision or problem size."""
