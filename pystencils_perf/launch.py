"""Launch candidates: thread-block size times thread folding, the options of a ranking and its candidate space.

The default space and the checks of what a device can run are the built-in `candidates` plugin
(`pystencils_perf.candidates`).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigurationError
from .vendors import GridLimits, vendor_of


def grid_limits(device) -> GridLimits:
    """The grid limits of `device`'s runtime: HIP's on AMD GPUs, else CUDA's."""
    return vendor_of(device).grid


@dataclass(frozen=True, order=True)
class LaunchConfig:
    """One way to launch a kernel: block size and per-thread folding, both (x, y, z)."""

    block: tuple[int, int, int]
    fold: tuple[int, int, int] = (1, 1, 1)

    def __post_init__(self):
        for name, triple in (("block", self.block), ("fold", self.fold)):
            if len(triple) != 3 or any(not isinstance(v, int) or v < 1 for v in triple):
                raise ConfigurationError(f"launch {name} must be three positive integers, got {triple!r}")

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    def grid(self, work_items: tuple[int, int, int]) -> tuple[int, int, int]:
        """Blocks per axis for a (folded) iteration space of `work_items` threads."""
        return tuple(-(-n // b) for n, b in zip(work_items, self.block))

    @property
    def label(self) -> str:
        return f"{'x'.join(map(str, self.block))} f{'x'.join(map(str, self.fold))}"


def parse_triple(text: str, what: str = "block") -> tuple[int, int, int]:
    """'32x2x16' -> (32, 2, 16): exactly three positive integers, so '32x32' is not silently a 32x32x1 block."""
    parts = text.lower().split("x")
    if len(parts) != 3 or not all(p.strip().isdecimal() and int(p) > 0 for p in parts):
        raise ConfigurationError(f"{what} {text!r} is not of the form AxBxC with three positive integers")
    return tuple(int(p) for p in parts)


def parse_triples(value, what: str = "block") -> tuple[tuple[int, int, int], ...] | None:
    """Blocks or folds as the API and the command line take them: None (the default space), a string like
    ``"32x4x8,16x8x8"``, or a sequence of triples (or of such strings); never empty, which the default would
    silently replace."""
    if value is None:
        return None
    items = value.split(",") if isinstance(value, str) else value
    try:
        items = list(items)
    except TypeError:
        raise ConfigurationError(
            f"{what}s must be a list of triples like (32, 4, 8) or a string like '32x4x8,16x8x8', got {value!r}"
        ) from None
    triples = tuple(_triple(item, what) for item in items if not (isinstance(item, str) and not item.strip()))
    if not triples:
        raise ConfigurationError(f"no {what} given (leave the {what}s out for the default ones)")
    return triples


def _triple(item, what: str) -> tuple[int, int, int]:
    if isinstance(item, str):
        return parse_triple(item.strip(), what)
    try:
        values = tuple(item)
    except TypeError:
        values = ()
    if len(values) != 3 or any(isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1 for v in values):
        raise ConfigurationError(f"{what} {item!r} is not three positive integers (x, y, z)")
    return tuple(int(v) for v in values)


#: the performance model a ranking uses unless told otherwise: the limiters plus latency, occupancy, issue, the
#: L1 pipeline and the tail wave (`models.throughput`), on every device; ``"limiters"`` is the paper's baseline
DEFAULT_MODEL = "throughput"
#: the device `rank`, `create_kernel`, `create_lb_kernel` and Kernel Tuner's `prune` rank for unless told (the
#: command line asks for one): the GPU most of the repository's measured data is of
DEFAULT_DEVICE = "A100"
#: the fastest launches whose order `pystencils-perf tune --replay` and Kernel Tuner's `ModelGuided` make certain by
#: compiling their code, where a SPEC's kernels compile per launch (`tune.replay.spec_candidates`'
#: ``compile_until_certain``): about the first measurements' worth, each compile taking seconds
COMPILED_HEAD = 10


@dataclass(frozen=True)
class RankOptions:
    """What the user asked of a ranking; None means the default."""

    threads: int | None = None
    blocks: tuple[tuple[int, int, int], ...] | None = None
    folds: tuple[tuple[int, int, int], ...] | None = None
    backend: str = "auto"
    #: the performance model that answers `perf_predict` (see `perf_models`)
    model: str = DEFAULT_MODEL
    #: candidate filters to apply after ranking (see `perf_prune_filters`)
    prune: tuple[str, ...] = ()
    #: values of the command-line options plugins added (`perf_addoption`), by dest
    plugin_options: Mapping[str, Any] = field(default_factory=dict)

    @staticmethod
    def of(
        threads=None, blocks=None, folds=None, backend="auto", model=DEFAULT_MODEL, prune=(), plugin_options=None
    ) -> RankOptions:
        """From the user's arguments: blocks and folds as `parse_triples` takes them, None for the default."""
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise ConfigurationError(f"threads per block must be a positive integer, got {threads!r}")
        if threads is not None and blocks is not None:
            raise ConfigurationError(
                "give threads (per block of the default shapes) or explicit blocks, not both: "
                "explicit blocks fix their own threads"
            )
        return RankOptions(
            threads=threads,
            blocks=parse_triples(blocks, "block"),
            folds=parse_triples(folds, "fold"),
            backend=backend,
            model=model,
            prune=(prune,) if isinstance(prune, str) else tuple(prune),
            plugin_options=dict(plugin_options or {}),
        )


@dataclass(frozen=True)
class Layout:
    """Where the fields lie when the kernel does not say: `harvest`'s ``domain_shape`` and ``align``, which it
    checks (`HarvestOptions`). One object from the command line to the harvest, as `RankOptions` is for the rest."""

    domain_shape: Any = None
    align: str = "base"


def keywords_or(given, from_keywords, what: str):
    """`given`, an options object, where there is one, else `from_keywords`, the object a function's keywords make.
    Both is refused: neither may silently win. A keyword at its default counts as not given."""
    if given is None:
        return from_keywords
    if from_keywords != type(from_keywords)():
        raise ConfigurationError(f"give {what} as keywords or as one object, not both")
    return given


@dataclass(frozen=True)
class CandidateSpace:
    """Every launch the `perf_candidates` plugins propose, split into those that can run and those rejected."""

    accepted: tuple[LaunchConfig, ...]
    rejected: tuple[tuple[LaunchConfig, str], ...]

    @property
    def folds(self) -> list[tuple[int, int, int]]:
        """The foldings among the accepted candidates, unfolded first."""
        return sorted({launch.fold for launch in self.accepted}, key=lambda f: (f != (1, 1, 1), f))


def check_threads(threads: int | None, device, name: str = "threads") -> None:
    """Refuse more threads per block than `device` runs (`name` is the argument's): no block of them exists, so no
    candidate would be proposed, and the message would blame the plugins."""
    if threads is not None and threads > device.max_threads_per_block:
        raise ConfigurationError(
            f"{name}: {threads} exceeds {device.name}'s limit of {device.max_threads_per_block} threads per block"
        )
