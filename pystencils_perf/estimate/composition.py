"""How each predicted volume is composed: one definition for the estimator and for calibration.

Every capacity-dependent volume is what must be transferred plus curve-weighted
parts of what might be (Ernst et al., JPDC 2023, sec. III.E): ``V = base + sum_t sign_t *
R_t(x_t) * volume_t`` with one Gompertz curve `R_t` per cause. `estimate_volumes`
evaluates these formulas with a device's curves on scalars; `capacity.calibrate`
builds them over arrays of candidates and refits the curves' coefficients. Both
call the functions below, so the model that is fitted is the model that predicts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class CurveTerm:
    """One curve's share of a volume: ``sign * R(x) * volume`` (bytes per lattice update)."""

    curve: str
    x: np.ndarray | float
    volume: np.ndarray | float
    sign: float = 1.0
    x_label: str = "x"
    volume_label: str = "volume"
    #: the curve as a share of its value at x = 0 (at most 1): where nothing competes for the cache, all of the
    #: volume behaves as at no competition (`dram_load`)
    relative_to_zero: bool = False


@dataclass(frozen=True)
class VolumeFormula:
    """``base + sum(sign * R(x) * volume)`` for one volume, on scalars or arrays of candidates."""

    metric: str
    base: np.ndarray | float
    terms: tuple[CurveTerm, ...]

    def evaluate(self, curves: dict):
        """The volume with these curves (a mapping from curve name to `Curve`)."""
        total = self.base
        for t in self.terms:
            curve = curves[t.curve]
            share = np.minimum(curve(t.x) / curve(0.0), 1.0) if t.relative_to_zero else curve(t.x)
            total = total + t.sign * share * t.volume
        return total


def l2_load(compulsory, requested, l1_oversubscription, uncached=0.0) -> VolumeFormula:
    """L2 -> L1 loads: ``V_comp + R_L1(O_L1) * (V_req - V_comp)``, plus the `uncached` requests of loads that an
    L1 caching only the read-only path passes on to L2 whole (`Device.global_loads_cached_in_l1`); `compulsory`
    and `requested` are then the cached loads'."""
    return VolumeFormula(
        "L2 load",
        compulsory + uncached,
        (
            CurveTerm(
                "l1_load_capacity_miss",
                l1_oversubscription,
                np.maximum(requested - compulsory, 0.0),
                x_label="L1 oversubscription",
                volume_label="redundant L1 load",
            ),
        ),
    )


def dram_load(new, overlap, previous_wave_ratio, l2_oversubscription, redundant, unified_l2: bool) -> VolumeFormula:
    """DRAM -> L2 loads: ``V_new + (1 - hit(x)) * V_overlap + R_L2(O_L2) * V_redundant``,
    ``x = (V_prev + S_prev) / (L2 - V_new - S_curr)`` (`volumes`: ``S`` are the lines the stores allocate).

    `new` is the wave's compulsory volume not shared with the previous wave,
    `redundant` what the wave's blocks re-read from L2 after their L1 evicted it (`volumes.reread_load`).

    On a `unified_l2` the hit curve counts as a share of its value at ``x = 0``: a previous wave that takes no
    room leaves all it shares with the current one in L2, where the authors' V100 curve, which every other device
    borrows, does not reach 1 (``exp(-0.078 exp(-0.206))``; docs/model/index.md, "DRAM -> L2 loads", says what
    that floor cost). On an L2 split into partitions a neighbour on the other partition's SMs misses the line in
    its own (`volumes.reread_load`): the curve stays as fitted.
    """
    return VolumeFormula(
        "DRAM load",
        new + overlap,
        (
            CurveTerm(
                "previous_wave_xy_hit",
                previous_wave_ratio,
                overlap,
                -1.0,
                x_label="previous wave / remaining L2",
                volume_label="previous-wave overlap",
                relative_to_zero=unified_l2,
            ),
            CurveTerm(
                "l2_load_capacity_miss",
                l2_oversubscription,
                redundant,
                x_label="L2 oversubscription",
                volume_label="redundant L2 load",
            ),
        ),
    )


def dram_store(compulsory, l2_oversubscription, redundant) -> VolumeFormula:
    """L2 -> DRAM stores: ``V_store + R_store(O_L2) * (V_L2,store - V_store)``."""
    return VolumeFormula(
        "DRAM store",
        compulsory,
        (
            CurveTerm(
                "l2_store_capacity_miss",
                l2_oversubscription,
                redundant,
                x_label="L2 oversubscription",
                volume_label="redundant L2 store",
            ),
        ),
    )
