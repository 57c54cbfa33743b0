"""Prune a kernel_tuner search space with a pystencils-perf ranking, without a GPU.

kernel_tuner times every configuration of ``tune_params``. The block sizes
(``block_size_x/y/z``) and a thread-folding parameter (each thread updates
``tile_size_z`` consecutive points along z, say) are exactly what
pystencils-perf ranks, so the model can choose the few launches worth timing.
`prune` ranks them and returns the top ``k`` (or those predicted within a
fraction of the best) as kernel_tuner ``restrictions`` and as the ordered list
of configurations. Parameters the model does not know (unrolling switches,
...) pass through: every value of theirs is kept with every kept launch.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

import pystencils_perf as pp
from pystencils_perf.errors import ConfigurationError
from pystencils_perf.launch import DEFAULT_DEVICE, LaunchConfig
from pystencils_perf.ranking import Ranking

BLOCK_NAMES = ("block_size_x", "block_size_y", "block_size_z")
AXES = ("x", "y", "z")


@dataclass(frozen=True)
class TuneSpace:
    """How kernel_tuner parameters map to launch configurations.

    :param tune_params: kernel_tuner's ``{name: [values]}``.
    :param block_names: the parameters of the block size along x, y, z (a missing y or z is 1).
    :param fold_params: ``{parameter: axis}`` for thread folding, e.g. ``{"tile_size_z": "z"}``.
    """

    tune_params: dict
    block_names: tuple[str, str, str] = BLOCK_NAMES
    fold_params: dict = field(default_factory=dict)

    def __post_init__(self):
        if not isinstance(self.tune_params, dict) or not self.tune_params:
            raise ConfigurationError(
                f"tune_params must be a non-empty dict of parameter lists, got {self.tune_params!r}"
            )
        for name, values in self.tune_params.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise ConfigurationError(f"tune_params[{name!r}] must be a non-empty list, got {values!r}")
        if len(self.block_names) != 3:
            raise ConfigurationError(f"block_names must name the x, y and z parameters, got {self.block_names!r}")
        if self.block_names[0] not in self.tune_params:
            raise ConfigurationError(
                f"tune_params has no {self.block_names[0]!r}: the block size in x is what is ranked"
            )
        for name, axis in self.fold_params.items():
            if name not in self.tune_params:
                raise ConfigurationError(
                    f"folding parameter {name!r} is not in tune_params ({', '.join(self.tune_params)})"
                )
            if axis not in AXES:
                raise ConfigurationError(f"folding parameter {name!r}: axis must be 'x', 'y' or 'z', got {axis!r}")
        axes = list(self.fold_params.values())
        if len(set(axes)) != len(axes):
            raise ConfigurationError(f"two folding parameters fold the same axis: {self.fold_params}")
        for name in self.modelled:
            bad = [v for v in self.tune_params[name] if type(v) is not int or v < 1]
            if bad:
                raise ConfigurationError(f"tune_params[{name!r}]: {bad[0]!r} is not a positive integer")

    @property
    def modelled(self) -> tuple[str, ...]:
        """The parameters the model ranks: block sizes and foldings that tune_params has."""
        return tuple(n for n in (*self.block_names, *self.fold_params) if n in self.tune_params)

    @property
    def others(self) -> tuple[str, ...]:
        return tuple(n for n in self.tune_params if n not in self.modelled)

    def launch(self, params: dict) -> LaunchConfig:
        """The launch of one configuration (a dict with at least the modelled parameters)."""
        block = tuple(int(params.get(n, 1)) for n in self.block_names)
        fold = [1, 1, 1]
        for name, axis in self.fold_params.items():
            fold[AXES.index(axis)] = int(params[name])
        return LaunchConfig(block, tuple(fold))

    def params(self, launch: LaunchConfig) -> dict:
        """The modelled parameters of `launch`."""
        values = dict(zip(self.block_names, launch.block))
        values.update({name: launch.fold[AXES.index(axis)] for name, axis in self.fold_params.items()})
        return {n: values[n] for n in self.modelled}

    def launches(self) -> list[LaunchConfig]:
        """Every distinct launch of the modelled parameters' product."""
        names = self.modelled
        combos = itertools.product(*(self.tune_params[n] for n in names))
        return list(dict.fromkeys(self.launch(dict(zip(names, c))) for c in combos))

    @property
    def size(self) -> int:
        return math.prod(len(v) for v in self.tune_params.values())


@dataclass(frozen=True)
class TunableKernel:
    """A kernel tuned with kernel_tuner: what the model harvests (anything an adapter reads) and its parameters."""

    kernel: object
    space: TuneSpace


@dataclass(frozen=True)
class Pruned:
    """The launches the model keeps, best first, as kernel_tuner restrictions and configurations."""

    space: TuneSpace
    ranking: Ranking
    kept: tuple[LaunchConfig, ...]

    @property
    def configurations(self) -> list[dict]:
        """Every kept configuration of tune_params, best predicted launch first (others in tune_params order)."""
        others = self.space.others
        combos = list(itertools.product(*(self.space.tune_params[n] for n in others)))
        order = list(self.space.tune_params)
        out = []
        for launch in self.kept:
            base = self.space.params(launch)
            for combo in combos:
                values = {**base, **dict(zip(others, combo))}
                out.append({n: values[n] for n in order})
        return out

    @property
    def restriction(self):
        """kernel_tuner restriction: True for a kept configuration.

        kernel_tuner calls a restriction with a dict, with keyword arguments or
        with the values in tune_params order, depending on its version and
        path; this function accepts all three.
        """
        keep = frozenset(self.kept)
        names = list(self.space.tune_params)
        space = self.space

        def restriction(*args, **kwargs) -> bool:
            if kwargs:
                params = kwargs
            elif len(args) == 1 and isinstance(args[0], dict):
                params = args[0]
            else:
                params = dict(zip(names, args))
            return space.launch(params) in keep

        return restriction

    @property
    def restrictions(self) -> list:
        """The ``restrictions=`` argument of ``kernel_tuner.tune_kernel``."""
        return [self.restriction]

    def report(self) -> str:
        """What is kept, best first, with the model's prediction; then how much was pruned and why some cannot run."""
        by_launch = {c.launch: c for c in self.ranking.candidates}
        n_launches = len(self.space.launches())
        lines = [
            f"{self.ranking.kernel} on {self.ranking.device.name}: tune_params spans {self.space.size} configurations "
            f"({n_launches} launches, {len(self.ranking.rejected)} of which cannot run or would idle threads); "
            f"the model keeps {len(self.configurations)} configurations ({len(self.kept)} launches)",
            f"{'#':>4}  {'parameters':<60} {'GLup/s':>7} {'limiter':>7}",
        ]
        for i, launch in enumerate(self.kept, 1):
            c = by_launch[launch]
            text = ", ".join(f"{k}={v}" for k, v in self.space.params(launch).items())
            lines.append(f"{i:>4}  {text:<60} {c.prediction.glups:>7.2f} {c.prediction.limiter:>7}")
        if self.ranking.rejected:
            lines.append("  rejected, e.g.")
            for launch, reason in self.ranking.rejected[:3]:
                text = ", ".join(f"{k}={v}" for k, v in self.space.params(launch).items())
                lines.append(f"    {text}: {reason}")
        return "\n".join(lines)


def prune(
    kernel,
    tune_params: dict,
    device=DEFAULT_DEVICE,
    *,
    top_k: int | None = 10,
    within: float | None = None,
    fold_params: dict | None = None,
    block_names: tuple[str, str, str] = BLOCK_NAMES,
    **rank_options,
) -> Pruned:
    """Rank the launches of `tune_params` for `kernel` on `device` and keep the best.

    :param kernel: anything an adapter plugin harvests (pystencils, loopy, a `CudaKernel` description, a `KernelModel`).
    :param device: the device to rank for (default `pystencils_perf.launch.DEFAULT_DEVICE`).
    :param top_k: keep at most this many launches (None: no limit).
    :param within: keep only launches predicted within this fraction of the best (0.1: at most 10% slower).
    :param fold_params: ``{parameter: axis}`` of thread-folding parameters, e.g. ``{"tile_size_z": "z"}``.
    :param rank_options: passed on to `pystencils_perf.rank` (``backend``, ``align``, ``domain_shape``).
    """
    if top_k is not None and (type(top_k) is not int or top_k < 1):
        raise ConfigurationError(f"top_k must be a positive integer or None, got {top_k!r}")
    if within is not None and (isinstance(within, bool) or not isinstance(within, (int, float)) or not 0 <= within < 1):
        raise ConfigurationError(f"within must be a fraction in [0, 1), got {within!r}")
    space = TuneSpace(dict(tune_params), tuple(block_names), dict(fold_params or {}))
    launches = space.launches()
    blocks = list(dict.fromkeys(launch.block for launch in launches))
    folds = list(dict.fromkeys(launch.fold for launch in launches))
    # the launches are the product of blocks and folds, as rank's candidates are
    ranking = pp.rank(TunableKernel(kernel, space), device, blocks=blocks, folds=folds, **rank_options)
    best = ranking.candidates[0].prediction.lups_per_second
    kept = [
        c.launch for c in ranking.candidates if within is None or c.prediction.lups_per_second >= (1 - within) * best
    ]
    return Pruned(space, ranking, tuple(kept[:top_k] if top_k is not None else kept))
