"""Capacity-miss curves fitted to measured volumes (Ernst et al., JPDC 2023, sec. III.E, IV.F-G).

The estimator predicts every volume as what it must transfer plus curve-weighted
parts of what it might: ``V = base + sum_t sign_t * R_t(x_t) * volume_t`` with
one Gompertz curve `R_t` (see `Curve`) per cause, e.g. the L2 load
``V_comp + R_L1(O) * (V_req - V_comp)``. Given measured volumes of many launch
candidates and the estimator's `base`, `x` and `volume` for each, the curves'
coefficients are a small nonlinear least-squares problem (`_least_squares`). A
fit never does worse on its data than the curve it replaces, and a curve the
data cannot determine is refused with the reason (`check_term`).
"""

from __future__ import annotations

import json
import math
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..devices import DATA_DIR, Curve, Device
from ..errors import CalibrationError, ConfigurationError
from ..outputs import write_text
from . import composition
from .composition import CurveTerm, VolumeFormula

#: a point informs a curve when the volume the curve weighs is at least this share of the measured volume
INFORMATIVE_SHARE = 0.01
#: smallest spread (max - min) of the miss or hit ratios the measurements imply
MIN_RATIO_SPREAD = 0.02
#: smallest relative spread of a curve's argument, (max - min) / max
MIN_X_SPREAD = 0.05
FREE_COEFFICIENTS = ("a", "b", "c")  # d only shifts x, like a change of b: it stays fixed


@dataclass(frozen=True)
class Observation:
    """One measured volume over many candidates and the estimator's formula for it (`composition`)."""

    formula: VolumeFormula
    measured: np.ndarray

    @property
    def metric(self) -> str:
        return self.formula.metric

    @property
    def terms(self) -> tuple[CurveTerm, ...]:
        return self.formula.terms

    def predicted(self, curves: dict[str, Curve]) -> np.ndarray:
        with np.errstate(over="ignore", invalid="ignore"):
            safe = {t.curve: _finite(curves[t.curve]) for t in self.terms}
            return np.asarray(self.formula.evaluate(safe), dtype=float)

    def relative_residual(self, curves: dict[str, Curve]) -> np.ndarray:
        return (self.predicted(curves) - self.measured) / self.measured

    def implied_ratio(self, term: CurveTerm, curves: dict[str, Curve]) -> np.ndarray:
        """The value of `term`'s curve that would make every prediction exact, the others as they are."""
        others = tuple(t for t in self.terms if t is not term)
        rest = Observation(replace(self.formula, terms=others), self.measured).predicted(curves)
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.measured - rest) / (term.sign * term.volume)


def _finite(curve: Curve):
    """`curve` with NaN (from inf * 0 at extreme arguments) read as no contribution, for the fit's residual."""
    return lambda x: np.nan_to_num(curve(x))


@dataclass(frozen=True)
class CurveFit:
    """The outcome for one curve: new coefficients, or the reason the data cannot give them."""

    name: str
    metric: str
    before: Curve
    after: Curve | None
    points: int
    reason: str = ""

    @property
    def fitted(self) -> bool:
        return self.after is not None


@dataclass(frozen=True)
class ObservationFit:
    """Curves fitted together on one measured volume, with its RMS relative error before and after."""

    observation: Observation
    fits: tuple[CurveFit, ...]
    rms_before: float
    rms_after: float


def _rms(r: np.ndarray) -> float:
    return float(np.sqrt(np.mean(r**2)))


def check_term(obs: Observation, term: CurveTerm, curves: dict[str, Curve]) -> tuple[int, str]:
    """Informative points of `term` and, if the data cannot determine its curve, why (else ""): fewer
    informative points than coefficients, or no spread in its argument or in the miss ratios the measurements
    imply."""
    share = term.volume / obs.measured
    informative = (share >= INFORMATIVE_SHARE) & np.isfinite(term.x)
    n, k = int(informative.sum()), len(FREE_COEFFICIENTS)
    if n <= k:
        return n, (
            f"only {n} of {len(share)} points have a {term.volume_label} volume of at least "
            f"{INFORMATIVE_SHARE:.0%} of the measured {obs.metric}; {k} coefficients need at least {k + 1}"
        )
    x = term.x[informative]
    if x.max() - x.min() < MIN_X_SPREAD * max(abs(x.max()), abs(x.min()), 1e-12):
        return n, f"its argument ({term.x_label}) spans only {x.min():.3g} to {x.max():.3g}: too flat to fit"
    ratio = obs.implied_ratio(term, curves)[informative]
    if np.ptp(ratio) < MIN_RATIO_SPREAD:
        return n, f"the measured {obs.metric} implies ratios within {np.ptp(ratio):.3f} of each other: too flat to fit"
    return n, ""


class _Coefficients:
    """Maps the free coefficients of several curves to one vector: a, log b, log |c| (c keeps its sign)."""

    #: the range the fit keeps each of a (a ratio stays a ratio), log b and log |c| in
    BOUNDS = ((0.0, 1.0), (-30.0, 30.0), (-10.0, 5.0))

    def __init__(self, curves: dict[str, Curve], names: list[str]):
        self.curves, self.names = curves, names

    def vector(self) -> np.ndarray:
        out = []
        for name in self.names:
            c = self.curves[name]
            out += [c.a, math.log(max(c.b, 1e-12)), math.log(max(abs(c.c), 1e-12))]
        return np.array(out)

    def project(self, v: np.ndarray) -> np.ndarray:
        v = v.copy()
        for k, (low, high) in enumerate(self.BOUNDS):
            v[k::3] = np.clip(v[k::3], low, high)
        return v

    def degenerate(self, v: np.ndarray) -> dict[str, str]:
        """Why the data do not determine each curve whose fit `v` ran to a bound, by name: at a = 0 the curve is
        zero and b and c are free; log b or log |c| at a bound is a step or a constant (a flat data set). a = 1, a
        ratio that saturates, is a fit."""
        reasons = {}
        for i, name in enumerate(self.names):
            a, log_b, log_c = (float(x) for x in v[3 * i : 3 * i + 3])
            edges = ["a = 0"] if a == self.BOUNDS[0][0] else []
            edges += [
                f"{k} = {math.exp(log):.4g}"
                for k, log, bounds in zip("bc", (log_b, log_c), self.BOUNDS[1:])
                if log in bounds
            ]
            if edges:
                reasons[name] = (
                    f"the fit is degenerate ({', '.join(edges)} at the edge of the range fitted): "
                    "the data do not determine the curve"
                )
        return reasons

    def curves_at(self, v: np.ndarray) -> dict[str, Curve]:
        out = dict(self.curves)
        for i, name in enumerate(self.names):
            c = out[name]
            a, logb, logc = v[3 * i : 3 * i + 3]
            out[name] = replace(c, a=float(a), b=float(math.exp(logb)), c=float(math.copysign(math.exp(logc), c.c)))
        return out


def _least_squares(residual, v0: np.ndarray, project, iterations: int = 200) -> np.ndarray:
    """Levenberg-Marquardt with a central-difference Jacobian; accepts only steps that lower the cost.

    The residual is the relative error of the predicted volume, the quantity validation reports; the
    iteration starts at the current coefficients and only accepts steps that lower it, so a fit never does
    worse on its data than the curve it replaces."""
    v, damping = v0.copy(), 1e-3
    r = residual(v)
    cost = float(r @ r)
    for _ in range(iterations):
        jac = np.empty((r.size, v.size))
        for j in range(v.size):
            h = 1e-6 * max(1.0, abs(v[j]))
            up, down = v.copy(), v.copy()
            up[j] += h
            down[j] -= h
            jac[:, j] = (residual(up) - residual(down)) / (2 * h)
        normal = jac.T @ jac
        gradient = jac.T @ r
        improved = False
        while damping < 1e10:
            lhs = normal + damping * (np.diag(np.diag(normal)) + 1e-12 * np.eye(v.size))
            trial = project(v - np.linalg.solve(lhs, gradient))
            r_trial = residual(trial)
            c_trial = float(r_trial @ r_trial)
            if np.isfinite(c_trial) and c_trial < cost:
                improved = cost - c_trial > 1e-12 * cost
                v, r, cost = trial, r_trial, c_trial
                damping = max(damping / 3, 1e-9)
                break
            damping *= 4
        if not improved:
            break
    return v


def _rounded(c: Curve) -> Curve:
    """Six significant digits: what a device file can show, far below what the data resolve."""
    return replace(c, **{k: float(f"{getattr(c, k):.6g}") for k in FREE_COEFFICIENTS})


def fit_observation(obs: Observation, curves: dict[str, Curve]) -> ObservationFit:
    """Fit every curve of `obs` that its data determine, the others held at their current coefficients."""
    checks = {t.curve: check_term(obs, t, curves) for t in obs.terms}
    free = [name for name, (_, reason) in checks.items() if not reason]
    before = _rms(obs.relative_residual(curves))
    new = curves
    while free:  # a curve the fit leaves degenerate is kept, and the others fitted again without it
        coeffs = _Coefficients(curves, free)

        def residual(v):
            return np.nan_to_num(obs.relative_residual(coeffs.curves_at(v)), nan=1e3, posinf=1e3, neginf=-1e3)

        fitted = _least_squares(residual, coeffs.vector(), coeffs.project)
        degenerate = coeffs.degenerate(fitted)
        if not degenerate:
            best = coeffs.curves_at(fitted)
            new = {**curves, **{name: _rounded(best[name]) for name in free}}
            break
        checks.update({name: (checks[name][0], reason) for name, reason in degenerate.items()})
        free = [name for name in free if name not in degenerate]
    fits = tuple(
        CurveFit(name, obs.metric, curves[name], new[name] if name in free else None, n, reason)
        for name, (n, reason) in checks.items()
    )
    return ObservationFit(obs, fits, before, _rms(obs.relative_residual(new)))


def _column(pairs, key) -> np.ndarray:
    return np.array([getattr(metrics, key) for _, metrics in pairs], dtype=float)


def _measured(pairs) -> np.ndarray:
    return np.array([m for m, _ in pairs], dtype=float)


def l2_load_observation(pairs) -> Observation:
    """L2 -> L1 loads (pairs: measured L2 load, estimator `Metrics`); the formula is `composition.l2_load`."""
    formula = composition.l2_load(
        _column(pairs, "l1_compulsory_bytes_per_lup"),
        _column(pairs, "l1_requested_bytes_per_lup"),
        _column(pairs, "l1_oversubscription"),
    )
    return Observation(formula, _measured(pairs))


def dram_load_observation(pairs, unified_l2: bool, l1_refit: tuple[Curve, Curve] | None = None) -> Observation:
    """DRAM loads, `composition.dram_load` over the candidates (of a device with a `unified_l2` or not).

    `l1_refit` (old and new L1 curve): the predicted L2 load, and with it the
    L2 redundant volume, moves by ``(R_new(O) - R_old(O)) * (V_req - V_comp)``.
    """
    redundant = _column(pairs, "dram_redundant_load_bytes_per_lup")
    if l1_refit is not None:
        l1 = l2_load_observation(pairs).terms[0]
        old, new = l1_refit
        redundant = np.maximum(redundant + (new(l1.x) - old(l1.x)) * l1.volume, 0.0)
    formula = composition.dram_load(
        _column(pairs, "dram_compulsory_load_bytes_per_lup"),
        _column(pairs, "wave_overlap_bytes_per_lup"),
        _column(pairs, "previous_wave_ratio"),
        _column(pairs, "l2_oversubscription"),
        redundant,
        unified_l2,
    )
    return Observation(formula, _measured(pairs))


def dram_store_observation(pairs) -> Observation:
    """DRAM stores, `composition.dram_store` over the candidates."""
    formula = composition.dram_store(
        _column(pairs, "dram_compulsory_store_bytes_per_lup"),
        _column(pairs, "l2_oversubscription"),
        _column(pairs, "dram_redundant_store_bytes_per_lup"),
    )
    return Observation(formula, _measured(pairs))


@dataclass(frozen=True)
class Calibration:
    """Every curve fit, in the order done, and the resulting set of curves."""

    fitted: tuple[ObservationFit, ...]
    curves: dict[str, Curve]

    @property
    def curve_fits(self) -> list[CurveFit]:
        return [f for o in self.fitted for f in o.fits]

    def table(self) -> str:
        lines = [
            f"{'curve':<24} {'volume':<10} {'points':>6} {'RMS rel. err before':>20} {'after':>7}  coefficients a, b, c"
        ]
        for o in self.fitted:
            for f in o.fits:
                head = f"{f.name:<24} {o.observation.metric:<10} {f.points:>6}"
                if f.fitted:
                    lines.append(
                        f"{head} {o.rms_before:>20.4f} {o.rms_after:>7.4f}  "
                        f"{f.before.a:.4g}, {f.before.b:.4g}, {f.before.c:.4g} -> {f.after.a:.4g}, {f.after.b:.4g}, {f.after.c:.4g}"
                    )
                else:
                    lines.append(f"{head} {'kept':>20} {'':>7}  {f.reason}")
        return "\n".join(lines)


def calibrate(
    points: list[tuple[dict[str, float], dict]], curves: dict[str, Curve], *, unified_l2: bool
) -> Calibration:
    """Fit the capacity-miss curves to measured volumes: the L1 curve on L2 loads first, then the DRAM curves.

    :param points: per candidate, its measured values by metric name
        (``"l2_load"``, ``"dram_load"``, ``"dram_store"``; others are ignored)
        and the estimator's metrics under `curves`.
    :param curves: the device's current curves, the starting point.
    :param unified_l2: whether the device's L2 is one (`composition.dram_load`).
    :raises CalibrationError: if the data determine none of the curves.
    """

    def measured(metric):
        return [(values[metric], metrics) for values, metrics in points if metric in values]

    fitted, current = [], dict(curves)
    l1 = "l1_load_capacity_miss"
    builders = (
        ("l2_load", l2_load_observation),
        ("dram_load", lambda pairs: dram_load_observation(pairs, unified_l2, (curves[l1], current[l1]))),
        ("dram_store", dram_store_observation),
    )
    for metric, build in builders:
        pairs = measured(metric)
        if pairs:
            fit = fit_observation(build(pairs), current)
            current = {**current, **{f.name: f.after for f in fit.fits if f.fitted}}
            fitted.append(fit)
    result = Calibration(tuple(fitted), current)
    if not any(f.fitted for f in result.curve_fits):
        reasons = "; ".join(f"{f.name}: {f.reason}" for f in result.curve_fits)
        raise CalibrationError(
            f"the data determine none of the capacity-miss curves ({reasons or 'no measured L2 load, DRAM load or DRAM store'})"
        )
    return result


def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a valid TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {type(v).__name__} to a device file")


def _toml_table(table: dict, prefix: tuple[str, ...] = ()) -> list[str]:
    scalars = {k: v for k, v in table.items() if not isinstance(v, dict)}
    lines = [f"\n[{'.'.join(prefix)}]"] if prefix and scalars else []
    lines += [f"{k} = {_toml_value(v)}" for k, v in scalars.items()]
    for k, v in table.items():
        if isinstance(v, dict):
            lines += _toml_table(v, prefix + (k,))
    return lines


def refuse_library_path(path) -> None:
    """Refuse to write a calibrated device file into pystencils-perf's own device library (a link to a library
    file is the library file): it would replace a library GPU's numbers, or name a second device by its aliases."""
    if Path(path).resolve().parent == DATA_DIR.resolve():
        raise ConfigurationError(
            f"{path} is in pystencils-perf's device library ({DATA_DIR}), which the package "
            "owns: write the calibrated device file elsewhere (--out)"
        )


def write_device_file(device: Device, calibration: Calibration, path, provenance: dict) -> None:
    """The device file of `device` with the fitted curves, each with its provenance (never into the device
    library: `refuse_library_path`).

    :param provenance: what every fitted curve records besides its points and
        residuals, e.g. ``{"data": ..., "date": ..., "spec": ...}``.
    """
    refuse_library_path(path)
    with open(device.path, "rb") as fh:
        raw = tomllib.load(fh)
    for f in calibration.curve_fits:
        if not f.fitted:
            continue
        fit = next(o for o in calibration.fitted if f in o.fits)
        c = f.after
        raw["curves"][f.name] = {
            "a": c.a,
            "b": c.b,
            "c": c.c,
            "d": c.d,
            "complement": c.complement,
            "fitted_on": f"{provenance.get('data', 'measured volumes')} ({fit.observation.metric}, {f.points} points)",
            "source": f"fitted by pystencils-perf calibrate to {provenance.get('data', 'measured volumes')} "
            f"({f.points} informative points of the {fit.observation.metric}); see its calibration table",
            "calibration": {
                **provenance,
                "volume": fit.observation.metric,
                "points": f.points,
                "rms_relative_error_before": round(fit.rms_before, 6),
                "rms_relative_error_after": round(fit.rms_after, 6),
                "previous": {
                    "a": f.before.a,
                    "b": f.before.b,
                    "c": f.before.c,
                    "d": f.before.d,
                    "source": f.before.source,
                },
            },
        }
    header = (
        f"# {device.name}: capacity-miss curves calibrated by `pystencils-perf calibrate`"
        f" ({provenance.get('date', '')}); every other number as in {Path(device.path).name}.\n"
    )
    write_text(path, header + "\n".join(_toml_table(raw)).lstrip("\n") + "\n")
