"""Which candidate to measure next, and when to stop: the model's prediction corrected by what was measured.

The search learns the model's error, in log time, as a Gaussian process over the candidates' parameters
(`parameter_coordinates`): a constant part (a factor between model and GPU of any size, which changes no order:
the times may be in any unit) and a smooth part (off by more for wide blocks, for read-only loads, ...). It
follows the model until the measurements are likelier, by the prior odds `model_prior_probability`, under a
second explanation without it (times smooth over the parameters alone: `follows_model`). The next candidate has
the lowest corrected time (minus `exploration` standard deviations), raised where measured neighbours failed to run
(`failure_chance`); each value of a switch (a parameter of two values) is measured early (`probe_switches_after`),
and while it follows the model, each parameter's values that lie far from every measured one (`probe_far_after`).
It stops when no unmeasured candidate is likely to beat the measured best by `stop_within` (`stop_log_error`), once
the model has been right on this GPU (`model_trusted`). docs/tuning.md says how the constants were chosen."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from threadpoolctl import ThreadpoolController

from ..errors import ConfigurationError

#: the model's error as a standard deviation of log time before anything is measured, set from the throughput
#: model's error on the held-out convolution GPUs when the search was built (docs/tuning.md)
MODEL_LOG_ERROR = 0.35
#: run-to-run noise of a measured time, as a standard deviation of log time (the caches' own spread is what
#: `benchmarks/bench_tune.py` reports as timing noise)
MEASUREMENT_LOG_NOISE = 0.05
#: how many candidates that ran a candidate's failure chance starts from (before any of its neighbours is measured)
FAILURE_PRIOR_RUNS = 1.0
#: how many log2 steps of a parameter (a doubling of the block width) keep the model's error alike
LENGTH_SCALE_LOG2 = 1.5
#: a parameter's value this many length scales from every measured value of it lies where the measurements tell
#: little of the model's error (their correlation with it is below exp(-2), a seventh): the search probes it
PROBE_DISTANCE_LENGTH_SCALES = 2.0
#: the chance, before anything is measured, that the model's order holds on this GPU up to its error; the rest
#: is the explanation without the model, which the search takes once the measurements favour it by the odds
#: 7:3 (chosen on the repository's caches with the model's, shuffled and inverted predictions, docs/tuning.md)
MODEL_PRIOR_PROBABILITY = 0.7
#: the smooth part of the times over the parameters where the model says nothing (no predictions, or a model
#: the measurements set aside), as a standard deviation of log time, at the least: wider where the measured
#: times spread wider (`ModelGuidedSearch._parameters_log_error`, docs/tuning.md)
PARAMETERS_LOG_ERROR = 0.5
#: timed measurements before the model's claim that nothing better is likely may stop the search ...
TRUST_AFTER_MEASUREMENTS = 8
#: ... and the most the measured times may scatter about the model's (standard deviation of log measured over
#: predicted, a constant factor taken out, and one per switch: `ModelGuidedSearch.model_scatter_per_switch`): half
#: the error the search assumes, a model shown right on this GPU
TRUSTED_LOG_ERROR = MODEL_LOG_ERROR / 2
#: ... and none of which lay further than this many standard deviations from what the search expected of it before
#: measuring it: a search that a measurement surprised has seen the model wrong on this GPU, where it cannot claim to
#: know what the rest would measure (a shared-memory cache whose fastest launches the model puts far down)
SURPRISE_STANDARD_DEVIATIONS = 3.0
#: the model's error the rule then assumes for the candidates not measured, in multiples of the scatter it has shown on
#: this GPU (`ModelGuidedSearch.model_scatter`), at most `MODEL_LOG_ERROR`: a model measured three times as exact as
#: assumed stops the search sooner, one that scatters by a third of it or more as before (chosen on the repository's
#: caches, docs/tuning.md: at twice the scatter the A100's whole convolution cache stopped at 68 % of its optimum)
STOP_ERROR_PER_SCATTER = 3.0
#: ... and at least twice the measurement noise: a few measurements that happen to match the model closely prove no
#: more than the timer can tell
STOP_LOG_ERROR_FLOOR = 2 * MEASUREMENT_LOG_NOISE


#: the BLAS libraries numpy loaded: the search's matrices (one row per measurement) are small, and OpenBLAS's
#: threads cost more than they save on them (docs/tuning.md, "A model that is wrong here")
_BLAS = ThreadpoolController()


def _one_blas_thread(method):
    @functools.wraps(method)
    def limited(*args, **kwargs):
        with _BLAS.limit(limits=1):
            return method(*args, **kwargs)

    return limited


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def parameter_coordinates(params: list[dict]) -> np.ndarray:
    """One row of coordinates per candidate, in units of `LENGTH_SCALE_LOG2` (constant parameters left out).

    Parameters become coordinates as Kernel Tuner's values are: numbers that are all positive on a log2 scale
    (block sizes, tiles), other numbers as they are, and anything else one coordinate per value."""
    columns = []
    names = sorted({k for p in params for k in p})
    for name in names:
        values = [p.get(name) for p in params]
        distinct = set(map(repr, values))
        if len(distinct) < 2:
            continue
        if all(_is_number(v) and v > 0 for v in values):
            columns.append(np.log2(np.array(values, dtype=float)))
        elif all(_is_number(v) for v in values):
            span = max(values) - min(values)
            columns.append(np.array(values, dtype=float) / span * LENGTH_SCALE_LOG2)
        else:  # one coordinate per value: two different values are one length scale apart
            for value in sorted(distinct):
                columns.append(
                    np.array([repr(v) == value for v in values], dtype=float) * LENGTH_SCALE_LOG2 / math.sqrt(2)
                )
    if not columns:
        return np.zeros((len(params), 0))
    return np.stack(columns, axis=1) / LENGTH_SCALE_LOG2


def switch_masks(params: list[dict]) -> list[np.ndarray]:
    """For each value of each parameter that takes exactly two values over `params` (a switch), which candidates
    have it; in the order of the parameters' names."""
    masks = []
    for name in sorted({k for p in params for k in p}):
        values = [repr(p.get(name)) for p in params]
        distinct = sorted(set(values))
        if len(distinct) == 2:
            masks.extend(np.array([v == value for v in values]) for value in distinct)
    return masks


@dataclass(frozen=True)
class SearchSettings:
    """The search's constants; the defaults are what `benchmarks/bench_tune.py` reports."""

    model_log_error: float = MODEL_LOG_ERROR
    measurement_log_noise: float = MEASUREMENT_LOG_NOISE
    #: standard deviations subtracted from the mean to pick the next candidate (0 trusts the corrected model: with a
    #: budget of ten among thousands, measuring where the model is merely unsure costs more than it finds;
    #: docs/tuning.md compares it with 0.5, the first choice)
    exploration: float = 0.0
    #: the same where the search does not follow the model (no predictions, or the measurements set it aside):
    #: only the uncertainty spreads the search
    exploration_without_model: float = 2.0
    #: the prior chance that the model's order holds (`MODEL_PRIOR_PROBABILITY`; 1 follows it whatever is measured)
    model_prior_probability: float = MODEL_PRIOR_PROBABILITY
    #: the smooth error of the explanation without the model, at the least (`PARAMETERS_LOG_ERROR`)
    parameters_log_error: float = PARAMETERS_LOG_ERROR
    #: after this many measurements, each value of each switch (`switch_masks`) that none measured so far is measured
    #: at its best corrected time, one after the other (0: never): a model blind to what a switch does otherwise keeps
    #: the whole search on the value it prefers (docs/tuning.md, "probes switches")
    probe_switches_after: int = 2
    #: after this many measurements (and the switches' probes), while the search follows the model, each parameter's
    #: values that lie `probe_distance` or more from every measured value of it are measured once, at their best
    #: corrected time (0: never): a model wrong in a whole corner of the space (a tile shape, a block height) is
    #: measured there before the budget is spent (docs/tuning.md, "probes far values")
    probe_far_after: int = 3
    #: in length scales of the model's error (`PROBE_DISTANCE_LENGTH_SCALES`)
    probe_distance: float = PROBE_DISTANCE_LENGTH_SCALES
    #: stop when no unmeasured candidate is faster than the measured best by this fraction ...
    stop_within: float = 0.01
    #: ... with more than this probability
    stop_probability: float = 0.02
    #: the rule stops a search only where the model has been right on this GPU: after this many timed
    #: measurements ...
    trust_after: int = TRUST_AFTER_MEASUREMENTS
    #: ... that scatter about the model's times by at most this much (`model_scatter_per_switch`)
    trusted_log_error: float = TRUSTED_LOG_ERROR
    #: ... none of which surprised the search by more than this many standard deviations
    surprise_standard_deviations: float = SURPRISE_STANDARD_DEVIATIONS
    #: the model's error the stop rule assumes for unmeasured candidates, per the scatter shown (`STOP_ERROR_PER_SCATTER`)
    stop_error_per_scatter: float = STOP_ERROR_PER_SCATTER
    #: ... at least (`STOP_LOG_ERROR_FLOOR`)
    stop_log_error_floor: float = STOP_LOG_ERROR_FLOOR

    def __post_init__(self):
        for name, value in vars(self).items():
            low, low_included, high, integer, words = _SETTING_RANGES[_SETTING_KINDS[name]]
            number = type(value) is int if integer else isinstance(value, (int, float)) and not isinstance(value, bool)
            if not (number and (low <= value if low_included else low < value) and value <= high):
                raise ConfigurationError(f"SearchSettings: {name} = {value!r} is not {words}")


#: what each of `SearchSettings`' constants is: a standard deviation (above 0), a number of them or a share of a
#: time (0 or more), a probability, or a number of measurements
_SETTING_KINDS = {
    "model_log_error": "deviation", "measurement_log_noise": "deviation", "parameters_log_error": "deviation",
    "trusted_log_error": "deviation", "stop_log_error_floor": "deviation", "probe_distance": "deviation",
    "surprise_standard_deviations": "deviation", "exploration": "amount", "exploration_without_model": "amount",
    "stop_within": "amount", "stop_error_per_scatter": "amount", "model_prior_probability": "probability",
    "stop_probability": "probability", "probe_switches_after": "count", "probe_far_after": "count",
    "trust_after": "count",
}  # fmt: skip
#: of each kind: its lowest value, whether that is allowed, its highest, whether it is an integer, and it in words
_SETTING_RANGES = {
    "deviation": (0.0, False, math.inf, False, "a number above 0"),
    "amount": (0.0, True, math.inf, False, "a number of at least 0"),
    "probability": (0.0, True, 1.0, False, "a probability (0 to 1)"),
    "count": (0, True, math.inf, True, "a number of measurements (an integer of at least 0)"),
}


class ModelGuidedSearch:
    """The state of one search: predictions, parameters, and what has been measured so far.

    :param predicted_seconds: the model's predicted time of every candidate, in seconds; `observe` takes
        milliseconds, as the tuner and Kernel Tuner time (the search decides alike in any units: the constant
        part is integrated out, `_gaussian_process`).
    :param params: every candidate's parameters (what tells candidates apart for the learned error).
    """

    def __init__(self, predicted_seconds, params: list[dict], settings: SearchSettings = SearchSettings()):
        predicted = np.asarray(predicted_seconds, dtype=float)
        if predicted.ndim != 1 or len(predicted) != len(params):
            raise ValueError("one prediction per candidate is needed")
        self.settings = settings
        self.prior = np.log(predicted)
        #: the explanation without the model: one level for all (the constant part learns it)
        self.flat_prior = np.zeros(len(predicted))
        self.informed = bool(np.ptp(self.prior) > 0) if len(predicted) else False
        self.coordinates = parameter_coordinates(params)
        self.measured: dict[int, float | None] = {}
        self.switches = switch_masks(params)
        #: the coordinates (parameters) whose far values have been probed (`_unprobed`)
        self.probed_columns: set[int] = set()
        #: the coordinate each pick of `next_batch` was chosen to probe, until it is measured (`reconsider` gives the
        #: probe back where it is not)
        self._probe_of_pick: dict[int, int] = {}
        #: candidates that are none after all: their own code cannot run (`reconsider`)
        self.discarded: set[int] = set()
        #: how far each timed measurement lay from what the search expected of it (its noise included), in standard
        #: deviations
        self.surprises: list[float] = []
        #: whether the search follows the model's predictions (`_weigh_the_model`): so far as the measurements
        #: allow, and never where no candidate has a prediction of its own
        self.follows_model = self.informed

    def __len__(self) -> int:
        return len(self.prior)

    def observe(self, index: int, time: float | None) -> None:
        """A measured time in milliseconds, or None where the candidate failed to run (its
        neighbours then are likely to fail too: `failure_chance`)."""
        if time is not None and self._timed_log():  # before a first time, the level is unknown: no surprise
            mean, sd = self.posterior(np.array([index]))
            # what a measurement is expected to be spreads by its own noise too
            spread = math.hypot(float(sd[0]), self.settings.measurement_log_noise)
            self.surprises.append(abs(math.log(time) - float(mean[0])) / spread)
        self.measured[index] = None if time is None else float(time)
        self._probe_of_pick.pop(index, None)
        if time is not None and self.informed:
            self._weigh_the_model()

    def _timed_log(self) -> dict[int, float]:
        return {i: math.log(t) for i, t in self.measured.items() if t is not None}

    def _weigh_the_model(self) -> None:
        """Follow the model unless the timed measurements are likelier without it by more than the prior odds
        (`SearchSettings.model_prior_probability`), each explanation's likelihood that of its Gaussian process."""
        timed, none = self._timed_log(), np.empty(0, dtype=int)
        with_model = self._gaussian_process(*self._explanation(True, timed), none, timed)[2]
        without = self._gaussian_process(*self._explanation(False, timed), none, timed)[2]
        p = self.settings.model_prior_probability
        self.follows_model = p >= 1.0 or without - with_model < math.log(p / (1.0 - p))

    def _explanation(
        self, with_model: bool, timed: dict[int, float], model_log_error: float | None = None
    ) -> tuple[np.ndarray, float]:
        """The prior and the smooth part's error of the explanation with the model (its error `model_log_error`,
        else `SearchSettings.model_log_error`) or without it."""
        if with_model:
            return self.prior, self.settings.model_log_error if model_log_error is None else model_log_error
        return self.flat_prior, self._parameters_log_error(timed)

    def _parameters_log_error(self, timed: dict[int, float]) -> float:
        """The smooth part of the explanation without the model: `SearchSettings.parameters_log_error`, or the
        spread of the measured log times where that is wider. Without the model nothing else says how far times
        differ over the space; where they differ more, a smooth part that is too narrow trusts its fit of a few
        measurements and stops looking elsewhere (docs/tuning.md)."""
        spread = float(np.std(list(timed.values()), ddof=1)) if len(timed) >= 2 else 0.0
        return max(self.settings.parameters_log_error, spread)

    @property
    def unmeasured(self) -> np.ndarray:
        return np.array([i for i in range(len(self)) if i not in self.measured and i not in self.discarded], dtype=int)

    def unpick(self, indices) -> None:
        """Picks of `next_batch` that are not measured as picked: the probes they were picked for are made again."""
        for index in indices:
            self.probed_columns.discard(self._probe_of_pick.pop(index, -1))

    def reconsider(self, index: int, predicted_seconds: float | None) -> None:
        """A pick of `next_batch` that was not measured: the model's time of it is now `predicted_seconds` (its own
        code compiled, where its time was a bound before), or None: its code cannot run, and it is no candidate. A
        probe it was picked for is made again (`unpick`)."""
        self.unpick([index])
        if predicted_seconds is None:
            self.discarded.add(index)
        else:
            self.prior[index] = math.log(predicted_seconds)

    def best(self) -> tuple[int, float] | None:
        """The fastest measured candidate and its time."""
        timed = [(t, i) for i, t in self.measured.items() if t is not None]
        return (min(timed)[1], min(timed)[0]) if timed else None

    def _correlation(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """How alike the smooth part of the error is between candidates `a` and `b` (1 for the same)."""
        distances = ((self.coordinates[a][:, None, :] - self.coordinates[b][None, :, :]) ** 2).sum(axis=2)
        return np.exp(-0.5 * distances)

    @_one_blas_thread
    def _gaussian_process(
        self, prior: np.ndarray, smooth_log_error: float, candidates: np.ndarray, timed: dict[int, float]
    ) -> tuple[np.ndarray, np.ndarray, float]:
        """Mean and standard deviation of the log time of `candidates` around `prior` plus a constant, given the
        `timed` log times, and the log likelihood of those (up to a constant common to every explanation).

        The constant (a factor between model and GPU, or the unit of the times) has a flat prior and is integrated
        out (universal kriging; the likelihood is the restricted one, of the differences between the measured
        times): nothing the search decides depends on the unit of either."""
        s = self.settings
        if not timed:
            return prior[candidates], np.full(len(candidates), smooth_log_error), 0.0
        seen = np.array(list(timed), dtype=int)
        residual = np.array(list(timed.values())) - prior[seen]
        gram = smooth_log_error**2 * self._correlation(seen, seen)
        factor = np.linalg.cholesky(gram + s.measurement_log_noise**2 * np.eye(len(seen)))
        whitened, whitened_ones = np.linalg.solve(factor, np.stack([residual, np.ones(len(seen))], axis=1)).T
        ones_weight = float(whitened_ones @ whitened_ones)
        constant = float(whitened_ones @ whitened) / ones_weight
        left = whitened - constant * whitened_ones
        weights = np.linalg.solve(factor.T, left)
        cross = smooth_log_error**2 * self._correlation(candidates, seen)
        projected = np.linalg.solve(factor, cross.T)
        constant_share = 1.0 - whitened_ones @ projected  # how much the estimated constant's error reaches each
        variance = smooth_log_error**2 - (projected**2).sum(axis=0) + constant_share**2 / ones_weight
        log_likelihood = -0.5 * float(left @ left) - float(np.log(np.diag(factor)).sum()) - 0.5 * math.log(ones_weight)
        return prior[candidates] + constant + cross @ weights, np.sqrt(np.maximum(variance, 1e-12)), log_likelihood

    def posterior(
        self, candidates: np.ndarray, extra: dict[int, float] | None = None, model_log_error: float | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Mean and standard deviation of the log time of `candidates`, given the measurements (and `extra`
        pretend measurements in log time, for choosing a batch), by the explanation the search follows (with the
        model's error `model_log_error` where given)."""
        timed = self._timed_log()
        timed.update(extra or {})
        explanation = self._explanation(self.follows_model, timed, model_log_error)
        mean, sd, _ = self._gaussian_process(*explanation, candidates, timed)
        return mean, sd

    def failure_chance(self, candidates: np.ndarray) -> np.ndarray:
        """The chance that each of `candidates` fails to run, from the measured candidates near it (weighted by
        how alike their parameters are, `_correlation`), starting from `FAILURE_PRIOR_RUNS` that ran."""
        seen = np.array(list(self.measured), dtype=int)
        if not seen.size:
            return np.zeros(len(candidates))
        failed = np.array([self.measured[i] is None for i in seen], dtype=float)
        weights = self._correlation(candidates, seen)
        return (weights @ failed) / (weights.sum(axis=1) + FAILURE_PRIOR_RUNS)

    def next_batch(self, size: int = 1) -> list[int]:
        """The next `size` candidates to measure: each the lowest optimistic time, given the ones before it
        measured at their mean (so that a batch for parallel workers spreads out)."""
        chosen: list[int] = []
        pretend: dict[int, float] = {}
        left = self.unmeasured
        s = self.settings
        exploration = s.exploration if self.follows_model else s.exploration_without_model
        while left.size and len(chosen) < size:
            mean, sd = self.posterior(left, pretend)
            runs = np.maximum(1.0 - self.failure_chance(left), 1e-9)
            score = mean - exploration * sd - np.log(runs)
            unprobed, column = (
                self._unprobed(len(self.measured) + len(chosen), chosen) if self.informed else (None, None)
            )
            if unprobed is not None:
                score = np.where(unprobed[left], score, np.inf)
            pick = int(np.argmin(score))
            if column is not None:
                self.probed_columns.add(column)
                self._probe_of_pick[int(left[pick])] = column
            chosen.append(int(left[pick]))
            pretend[int(left[pick])] = float(mean[pick])
            left = np.delete(left, pick)
        return chosen

    def _unprobed(self, made: int, chosen: list[int]) -> tuple[np.ndarray | None, int | None]:
        """What to probe next, with `made` measurements made: once they reach `SearchSettings.probe_switches_after`,
        the candidates of the first switch value that no measured or `chosen` candidate has; else, once they reach
        `SearchSettings.probe_far_after` and while the search follows the model, those of the first parameter not
        probed so far (a coordinate, not in `probed_columns`) whose value lies `SearchSettings.probe_distance` or
        more from every taken one's, and that coordinate; (None, None) where there are none (or before). A
        parameter is probed once: a wide one (block widths 1-1024) would otherwise take a probe for every few
        doublings of its range."""
        s = self.settings
        taken = [*self.measured, *chosen]
        if s.probe_switches_after and made >= s.probe_switches_after:
            switch = next((mask for mask in self.switches if not mask[taken].any()), None)
            if switch is not None:
                return switch, None
        if not s.probe_far_after or made < s.probe_far_after or not self.follows_model:
            return None, None
        for c, column in enumerate(self.coordinates.T):
            if c in self.probed_columns:
                continue
            values = np.unique(column)
            far = values[np.abs(values[:, None] - np.unique(column[taken])[None, :]).min(axis=1) >= s.probe_distance]
            if far.size:
                return np.isin(column, far), c
        return None, None

    def chance_to_improve(self) -> float:
        """The highest probability that an unmeasured candidate beats the best measured by `stop_within`, with the
        model's error this GPU has shown (`stop_log_error`)."""
        best, left = self.best(), self.unmeasured
        if best is None:
            return 1.0
        if not left.size:
            return 0.0
        mean, sd = self.posterior(left, model_log_error=self.stop_log_error())
        threshold = math.log(best[1]) + math.log1p(-self.settings.stop_within)
        chance = 0.5 * np.array([math.erfc(-z / math.sqrt(2)) for z in (threshold - mean) / sd])
        return float((chance * (1.0 - self.failure_chance(left))).max())

    def model_scatter(self) -> float | None:
        """How far the measured times scatter about the model's: the standard deviation of log measured over
        predicted time (a constant factor between the two taken out), or None before two timed measurements or
        without predictions (all alike)."""
        residuals = self._residuals_about_model()
        if residuals is None or len(residuals[1]) < 2:
            return None
        return float(np.std(residuals[1], ddof=1))

    def _residuals_about_model(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The timed candidates and their log measured over predicted time, or None without predictions."""
        if not self.informed:
            return None
        timed = self._timed_log()
        seen = np.array(list(timed), dtype=int)
        return seen, np.array(list(timed.values())) - self.prior[seen]

    def model_scatter_per_switch(self) -> float | None:
        """`model_scatter` with a constant factor taken out for each switch (`switch_masks`) measured at both of its
        values as well: a switch can choose another code path (shared memory or not), whose time scale the model may
        miss by a factor of its own, which the search's smooth part learns from a few measurements on either side
        (docs/tuning.md). None until the timed measurements outnumber the factors, or without predictions."""
        if (residuals := self._residuals_about_model()) is None:
            return None
        seen, residual = residuals
        factors = [np.ones(len(seen))]
        # `switches` holds each switch's two values' masks in turn: one of them per switch
        factors += [mask[seen].astype(float) for mask in self.switches[1::2] if 0 < mask[seen].sum() < len(seen)]
        if len(seen) <= len(factors):
            return None
        design = np.stack(factors, axis=1)
        left = residual - design @ np.linalg.lstsq(design, residual, rcond=None)[0]
        return float(np.sqrt(left @ left / (len(seen) - len(factors))))

    def stop_log_error(self) -> float:
        """The model's error the stop rule assumes for the candidates not measured: `SearchSettings.model_log_error`,
        or where the measured times scatter less about the model's (`model_scatter`), that scatter times
        `stop_error_per_scatter`, at least `stop_log_error_floor`. What the scatter of the measured candidates shows
        of the model on this GPU carries over to the rest only in part: a model can be right wherever it was measured
        and blind to a pocket of the space it puts far down (docs/tuning.md). The scatter is the plain one, not the
        smaller one per switch that trust asks for (`model_trusted`): with that one, a model blind to such a pocket
        stopped the search short of it (docs/tuning.md)."""
        s = self.settings
        scatter = self.model_scatter()
        if scatter is None:
            return s.model_log_error
        return min(s.model_log_error, max(s.stop_log_error_floor, s.stop_error_per_scatter * scatter))

    def model_trusted(self) -> bool:
        """Whether the model has been right on this GPU (`SearchSettings.trust_after`, `trusted_log_error` of
        `model_scatter_per_switch`) and the search's own expectations every time (`surprise_standard_deviations`):
        its claim that nothing better is likely rests on its own order, which a wrong model (another kernel's
        predictions, shared memory it does not see) gets wrong while the search still believes it. Without
        predictions, or once the measurements set the model aside (`follows_model`), there is no claim: the search
        runs to its budget."""
        s = self.settings
        scatter = self.model_scatter_per_switch()
        timed = sum(t is not None for t in self.measured.values())
        return (
            self.follows_model
            and scatter is not None
            and timed >= s.trust_after
            and scatter <= s.trusted_log_error
            and max(self.surprises, default=0.0) <= s.surprise_standard_deviations
        )

    def done(self) -> bool:
        """Everything measured, or, where the model has been right so far (`model_trusted`), nothing left that is
        likely to be better (see the module docstring)."""
        if not self.unmeasured.size:
            return True
        return self.model_trusted() and self.chance_to_improve() <= self.settings.stop_probability
