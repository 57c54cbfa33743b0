"""User-facing errors.

Every problem a user can cause (a bad kernel, access, field, device key or file)
raises a `PerfError` subclass whose message is one line naming the culprit. The
CLI prints that line and exits with status 2; tracebacks are reserved for bugs.
"""


class PerfError(Exception):
    """Base class of all errors caused by input to pystencils-perf."""


class HarvestError(PerfError):
    """A kernel cannot be described by the kernel model (CPU target, indirect or
    non-affine address, field without sizes, ...)."""


class DeviceError(PerfError):
    """An unknown device name or a malformed device file."""


class ConfigurationError(PerfError):
    """A malformed launch candidate, option or command-line argument."""


class MeasurementError(PerfError):
    """Measuring is impossible here (no cupy, no GPU, no ncu) or a measured data set is malformed."""


class CalibrationError(PerfError):
    """A data set cannot determine a capacity-miss curve (too few points, too flat)."""


class NothingRunsError(PerfError):
    """Every launch candidate of a kernel was rejected (`rejected`: (launch, reason) pairs): a space's variant
    whose code cannot run in any of its blocks is one more rejected part of the space, not an error of it."""

    def __init__(self, message: str, rejected: list):
        super().__init__(message)
        self.rejected = rejected


class PerfWarning(UserWarning):
    """Input that is ranked, but likely not as meant (a kernel that races, or reads outside its fields): its
    message is one line naming the culprit, which the CLI prints as ``pystencils-perf: warning: ...``."""
