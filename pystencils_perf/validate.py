"""Predictions against a measured data set: errors, ranking quality, plots and a report.

`validate` ranks exactly the measured launch candidates and pairs every row with its prediction. Per measured
metric it reports the mean absolute percentage error (MAPE); where throughput was measured, also how well the
predictions order the candidates: Spearman's rank correlation, the measured throughput of the predicted-best
candidate as a fraction of the measured best, and top-5 recall, where the measured best ranks among the
predictions, and the median measured fraction of the best (what a random pick gets). Kernel Tuner data
(`measure.kernel_tuner`) is validated per variant of the non-block parameters and pooled (`validate_tuned`).
`write_report` adds plots in the style of Ernst et al. (JPDC 2023) (predicted against measured on log axes,
markers coloured by block shape) when matplotlib is installed, and a Markdown report that states the numbers.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from .devices import Device, get_device
from .errors import MeasurementError
from .rank import harvest
from .kernel import KernelModel
from .launch import DEFAULT_MODEL, Layout, LaunchConfig, RankOptions, keywords_or, parse_triples
from .measure.dataset import METRICS, Dataset, Measurement, Metric, kernel_record, other_gpu
from .measure.kernel_tuner import TunableSpec, TunerData, variants
from .outputs import replacing_folder
from .rank import rank
from .ranking import RankedCandidate, Ranking

#: how many of the measured-fastest candidates top-k recall looks for among the predicted-fastest
TOP_K = 5


@dataclass(frozen=True)
class Pair:
    """A measured candidate and its prediction."""

    measured: Measurement
    candidate: RankedCandidate
    #: the kernel variant (non-block tunable parameters) for Kernel Tuner data, else empty
    variant: str = ""

    @property
    def launch(self) -> LaunchConfig:
        return self.measured.launch

    @property
    def label(self) -> str:
        return f"{self.launch.label} {self.variant}" if self.variant else self.launch.label

    def predicted(self, metric: Metric) -> float:
        if metric.predicted_key is None:
            return self.candidate.prediction.glups
        return float(self.candidate.metrics.value(metric.predicted_key))


def predict_dataset(
    dataset: Dataset,
    kernel,
    device,
    options: RankOptions,
    layout: Layout = Layout(),
    *,
    progress=None,
    variant: str = "",
    jobs: int | None = None,
) -> tuple[Ranking, list[Pair], list[str]]:
    """Rank the blocks x foldings of `dataset` and pair every row with its candidate's prediction; a measured
    launch that the model rejects (it says the launch cannot run, yet it was measured: registers compiled for
    another binary than the measured one, say) is left out, and a warning names it and the reason."""
    measured = replace(
        options, blocks=parse_triples(dataset.blocks, "block"), folds=parse_triples(dataset.folds, "fold")
    )
    ranking = rank(
        kernel,
        device,
        options=measured,
        layout=layout,
        progress=progress,
        jobs=jobs,
        launch_resources={row.launch: row.resources for row in dataset.rows if row.resources} or None,
    )
    by_launch = {c.launch: c for c in ranking.candidates}
    rejected = dict(ranking.rejected)
    pairs, left_out = [], []
    for row in dataset.rows:
        if row.launch in by_launch:
            pairs.append(Pair(row, by_launch[row.launch], variant))
        else:
            label = f"{row.launch.label} {variant}".strip()
            left_out.append(
                f"{dataset.name}: measured launch {label} is rejected by the model and left out: "
                f"{rejected.get(row.launch, 'not a candidate')}"
            )
    return ranking, pairs, left_out


@dataclass(frozen=True)
class MetricError:
    """Percentage errors of one metric, (predicted - measured) / measured, over the rows that measured it."""

    metric: Metric
    points: int
    mape_percent: float
    mean_error_percent: float
    max_error_percent: float
    worst: LaunchConfig
    worst_label: str = ""


def metric_errors(pairs: list[Pair], metrics=METRICS) -> list[MetricError]:
    out = []
    for metric in metrics:
        measured = [p for p in pairs if metric.name in p.measured.values]
        if not measured:
            continue
        errors = (
            np.array(
                [
                    (p.predicted(metric) - p.measured.values[metric.name]) / p.measured.values[metric.name]
                    for p in measured
                ]
            )
            * 100.0
        )
        worst = int(np.argmax(np.abs(errors)))
        out.append(
            MetricError(
                metric,
                len(measured),
                float(np.mean(np.abs(errors))),
                float(np.mean(errors)),
                float(np.abs(errors[worst])),
                measured[worst].launch,
                measured[worst].label,
            )
        )
    return out


def _ranks(values: np.ndarray) -> np.ndarray:
    """Ranks 1..n, ties sharing their average rank."""
    order = np.argsort(values, kind="stable")
    ranks = np.empty(len(values))
    ranks[order] = np.arange(1, len(values) + 1)
    for v in np.unique(values):
        tied = values == v
        ranks[tied] = ranks[tied].mean()
    return ranks


def spearman(a, b) -> float:
    """Spearman's rank correlation (Pearson correlation of the ranks, ties averaged); nan if either is constant."""
    ra, rb = _ranks(np.asarray(a, dtype=float)), _ranks(np.asarray(b, dtype=float))
    ra, rb = ra - ra.mean(), rb - rb.mean()
    denominator = math.sqrt(float(ra @ ra) * float(rb @ rb))
    return float(ra @ rb) / denominator if denominator else float("nan")


@dataclass(frozen=True)
class TimeScores:
    """How predicted times order and fit measured ones, with ties counted against the model."""

    spearman: float
    #: the measured best time over the slowest measured time among the launches predicted fastest (ties at their
    #: worst: a model that predicts many launches alike does not get credit for the best of them)
    pick_share_of_best: float
    #: launches predicted at least as fast as the measured best, itself included (ties count against it)
    best_predicted_rank: int
    #: mean absolute error of the predicted times, percent of the measured
    mape_percent: float


def time_scores(predicted_s, measured_s) -> TimeScores:
    """`TimeScores` of predicted against measured times (seconds or any one unit) of the same launches, in order."""
    p, m = np.asarray(predicted_s, dtype=float), np.asarray(measured_s, dtype=float)
    return TimeScores(
        spearman=spearman(p, m),
        pick_share_of_best=float(m.min() / m[p <= p.min()].max()),
        best_predicted_rank=int(np.sum(p <= p[np.argmin(m)])),
        mape_percent=float(np.mean(np.abs(p - m) / m) * 100),
    )


def rerun_spreads(first: dict, rerun: dict) -> np.ndarray:
    """The timing noise of launches timed twice (times by launch, two timings of the same GPU): |rerun - first| /
    first for each launch in both."""
    both = sorted(first.keys() & rerun.keys())
    return np.array([abs(rerun[k] - first[k]) / first[k] for k in both])


@dataclass(frozen=True)
class RankingQuality:
    """How well predicted throughput orders the candidates whose throughput was measured."""

    points: int
    spearman: float
    predicted_best: LaunchConfig
    measured_best: LaunchConfig
    best_fraction: float
    top_k: int
    top_k_recall: float
    predicted_best_label: str = ""
    measured_best_label: str = ""
    #: how many candidates are predicted at least as fast as the measured best (itself included: ties count against it)
    measured_best_predicted_rank: int = 0
    #: median over candidates of measured throughput / measured best: what a random pick gets
    median_fraction: float = float("nan")


def ranking_quality(pairs: list[Pair], k: int = TOP_K) -> RankingQuality | None:
    """None when fewer than two candidates have a measured throughput."""
    timed = [p for p in pairs if "glups" in p.measured.values]
    if len(timed) < 2:
        return None
    measured = np.array([p.measured.values["glups"] for p in timed])
    predicted = np.array([p.candidate.prediction.glups for p in timed])
    k = min(k, len(timed))
    best_predicted, best_measured = int(np.argmax(predicted)), int(np.argmax(measured))
    top_predicted = set(np.argsort(-predicted, kind="stable")[:k])
    top_measured = set(np.argsort(-measured, kind="stable")[:k])
    return RankingQuality(
        points=len(timed),
        spearman=spearman(predicted, measured),
        predicted_best=timed[best_predicted].launch,
        measured_best=timed[best_measured].launch,
        best_fraction=float(measured[best_predicted] / measured[best_measured]),
        top_k=k,
        top_k_recall=len(top_predicted & top_measured) / k,
        predicted_best_label=timed[best_predicted].label,
        measured_best_label=timed[best_measured].label,
        measured_best_predicted_rank=int(np.sum(predicted >= predicted[best_measured])),  # ties count against it
        median_fraction=float(np.median(measured) / measured[best_measured]),
    )


@dataclass(frozen=True)
class Validation:
    dataset: Dataset
    ranking: Ranking
    pairs: list[Pair]
    errors: list[MetricError]
    quality: RankingQuality | None
    #: one line each: what could not be checked, or looks amiss, about the data against the SPEC and device
    warnings: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"{self.ranking.kernel} on {self.ranking.device.name}"

    @property
    def plot_title(self) -> str:
        """The title with the device file, which tells calibrated coefficients from the library's."""
        return f"{self.title} ({Path(self.ranking.device.path).name})"

    def subset(self, keep) -> Validation:
        """The same validation over the pairs for which `keep(pair)` is true (errors and quality recomputed)."""
        pairs = [p for p in self.pairs if keep(p)]
        return Validation(
            self.dataset, self.ranking, pairs, metric_errors(pairs), ranking_quality(pairs), self.warnings
        )

    def error(self, metric_name: str) -> MetricError | None:
        return next((e for e in self.errors if e.metric.name == metric_name), None)

    def limiter_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for p in self.pairs:
            counts[p.candidate.prediction.limiter] = counts.get(p.candidate.prediction.limiter, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: -kv[1]))

    NO_THROUGHPUT = (
        "no measured throughput is compared (meas_glups is empty, or left out where the description "
        "does not model the run time): no rank correlation, best-candidate fraction or top-5 recall"
    )

    def quality_items(self) -> list[tuple[str, str]]:
        """The ranking-quality numbers as (what, value); none without measured throughput."""
        q = self.quality
        if q is None:
            return []
        return [
            ("timed candidates", str(q.points)),
            ("Spearman rank correlation, predicted vs measured throughput", f"{q.spearman:.3f}"),
            (
                f"measured throughput of the predicted best ({q.predicted_best_label or q.predicted_best.label}) / "
                f"measured best ({q.measured_best_label or q.measured_best.label})",
                f"{100 * q.best_fraction:.1f} %",
            ),
            (
                f"top-{q.top_k} recall (measured top {q.top_k} among the predicted top {q.top_k})",
                f"{q.top_k_recall:.2f}",
            ),
            ("predicted rank of the measured best", f"{q.measured_best_predicted_rank} of {q.points}"),
            ("median measured throughput / measured best (a random pick)", f"{100 * q.median_fraction:.1f} %"),
        ]

    def table(self) -> str:
        lines = [
            f"{self.title}: {len(self.pairs)} measured candidates ({self.dataset.name})",
            f"{'metric':<19} {'unit':<10} {'points':>6} {'MAPE %':>7} {'mean err %':>10} {'max err %':>9}  worst candidate",
        ]
        for e in self.errors:
            lines.append(
                f"{e.metric.label:<19} {e.metric.unit:<10} {e.points:>6} {e.mape_percent:>7.2f} "
                f"{e.mean_error_percent:>+10.2f} {e.max_error_percent:>9.1f}  {e.worst_label or e.worst.label}"
            )
        lines += [f"{what}: {value}" for what, value in self.quality_items()] or [self.NO_THROUGHPUT]
        lines.append("predicted limiters: " + ", ".join(f"{k} {v}" for k, v in self.limiter_counts().items()))
        return "\n".join(lines)


def measured_kernel_warnings(dataset: Dataset, model: KernelModel, device: Device) -> list[str]:
    """Refuse data that records another kernel than `model` (`measure` writes its fields and accesses); the
    warnings where the data does not say, or names another GPU than `device`."""
    record = kernel_record(model)
    if not any(dataset.recorded(column) for column in record):
        return [
            f"{dataset.name} does not say which kernel it measured: check that it is the SPEC's "
            f"({record['fields']}; {record['accesses']})",
            *other_gpu(dataset.name, dataset.recorded("device"), device),
        ]
    for column, value in record.items():
        if dataset.recorded(column) != {value}:
            raise MeasurementError(
                f"{dataset.name} was measured on {column} {' | '.join(sorted(dataset.recorded(column)))}, "
                f"but the SPEC's kernel has {column} {value}: give the SPEC (and --domain) it was measured with"
            )
    return other_gpu(dataset.name, dataset.recorded("device"), device)


def validate(
    dataset: Dataset,
    kernel,
    device,
    *,
    align="base",
    domain_shape=None,
    backend="auto",
    model=DEFAULT_MODEL,
    progress=None,
    jobs: int | None = None,
    options: RankOptions | None = None,
    layout: Layout | None = None,
) -> Validation:
    """Predict every measured candidate of `dataset` and compare (see the module docstring); first check that the
    data was measured on the SPEC's kernel (`measured_kernel_warnings`). `options` and `layout` may stand for the
    keywords, as for `rank`."""
    options = keywords_or(options, RankOptions.of(backend=backend, model=model), "the backend and model")
    layout = keywords_or(layout, Layout(domain_shape, align), "the layout (align, domain_shape)")
    dev = get_device(device)
    warnings = measured_kernel_warnings(
        dataset, harvest(kernel, domain_shape=layout.domain_shape, align=layout.align), dev
    )
    ranking, pairs, left_out = predict_dataset(dataset, kernel, dev, options, layout, progress=progress, jobs=jobs)
    return _validation(dataset, ranking, pairs, [*warnings, *left_out])


def _validation(dataset: Dataset, ranking: Ranking, pairs: list[Pair], warnings: list[str]) -> Validation:
    if not pairs:
        raise MeasurementError(f"{dataset.name}: the model rejects every measured launch ({warnings[-1]})")
    return Validation(dataset, ranking, pairs, metric_errors(pairs), ranking_quality(pairs), tuple(warnings))


def validate_tuned(
    data: TunerData,
    spec: TunableSpec,
    device,
    *,
    backend="auto",
    model=DEFAULT_MODEL,
    progress=None,
    keep_variant=None,
    jobs: int | None = None,
    options: RankOptions | None = None,
) -> Validation:
    """Kernel Tuner data: rank each variant's measured blocks with its own kernel, then compare all pairs pooled.

    :param keep_variant: optional predicate on a variant's parameters (dict); others are left out.
    :param options: in place of backend and model, as for `rank`.
    """
    options = keywords_or(options, RankOptions.of(backend=backend, model=model), "the backend and model")
    dev = get_device(device)
    warnings = [*_problem_size_warnings(data, spec), *other_gpu(Path(data.path).name, {data.device_name} - {""}, dev)]
    pairs, candidates, rejected, rows = [], [], [], []
    chosen = [v for v in variants(data, spec, dev.l2_sector_bytes) if keep_variant is None or keep_variant(v.params)]
    if not chosen:
        raise MeasurementError(f"{data.path}: no variant of the tunable parameters is left to validate")
    for variant in chosen:
        ranking, variant_pairs, left_out = predict_dataset(
            variant.dataset,
            spec.kernel(variant.params),
            dev,
            options,
            progress=progress,
            variant=variant.label,
            jobs=jobs,
        )
        pairs += variant_pairs
        warnings += left_out
        candidates += ranking.candidates
        rejected += ranking.rejected
        rows += variant.dataset.rows
    name = Path(spec.path).stem
    pooled = Ranking(
        dev, f"{name} ({len(chosen)} variants)", sorted(candidates, key=lambda c: -c.prediction.glups), rejected
    )
    return _validation(Dataset(data.path, tuple(rows)), pooled, pairs, warnings)


def _problem_size_warnings(data: TunerData, spec: TunableSpec) -> list[str]:
    """Kernel Tuner's problem size is the SPEC's useful updates per launch by the convention of this project's
    SPECs, not by Kernel Tuner's definition (it sizes the grid): a difference is a warning, not an error."""
    name = Path(data.path).name
    if data.problem_size is None:
        return [f"{name} does not record its problem size: check the SPEC's lattice_updates = {spec.lattice_updates}"]
    points = math.prod(data.problem_size)
    if points != spec.lattice_updates:
        return [
            f"{name} was tuned with problem_size {list(data.problem_size)} ({points} points), but the SPEC's "
            f"lattice_updates = {spec.lattice_updates}: throughputs are off by that ratio if the SPEC is not "
            "of this data"
        ]
    return []


# -- plots ---------------------------------------------------------------------------------------

#: block extents that map to full colour intensity, as in Ernst et al. (JPDC 2023) sec. IV.B: RGB(log x/log 256, log y/log 256, log z/log 64)
COLOUR_FULL_EXTENT = (256, 256, 64)
FOLD_MARKERS = ("o", "^", "s", "D", "v", "P", "X", "*")
COLOUR_NOTE = (
    "marker colour: RGB = (log2 bx / 8, log2 by / 8, log2 bz / 6): red wide in x, green tall in y, blue deep in z"
)


def block_colour(block) -> tuple[float, float, float]:
    """The paper's block-shape colour, clipped to [0, 1]."""
    return tuple(min(1.0, math.log2(b) / math.log2(full)) for b, full in zip(block, COLOUR_FULL_EXTENT))


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _fold_marker(folds: list) -> dict:
    return {f: FOLD_MARKERS[i % len(FOLD_MARKERS)] for i, f in enumerate(folds)}


def _log_limits(values) -> tuple[float, float]:
    """Log-axis limits that span at least a factor of 2, so a nearly constant metric still reads."""
    lo, hi = min(values), max(values)
    centre = math.sqrt(lo * hi)
    span = max(hi / lo, 2.0) ** 0.5 * 1.1
    return centre / span, centre * span


def nice_log_ticks(lo: float, hi: float) -> list[float]:
    """At least three round numbers within [lo, hi] for a log axis: 1-2-5 steps, finer for short ranges."""
    levels = (
        (1, 2, 5),
        (1, 2, 3, 5),
        (1, 1.5, 2, 3, 4, 5, 6, 8),
        (1, 1.2, 1.4, 1.6, 1.8, 2, 2.5, 3, 3.5, 4, 5, 6, 7, 8, 9),
    )
    decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
    for mantissas in levels:
        ticks = [m * 10.0**k for k in decades for m in mantissas if lo <= m * 10.0**k <= hi]
        if len(ticks) >= 3:
            break
    return ticks


def _set_log_axis(axis, lo: float, hi: float) -> None:
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator

    axis.set_major_locator(FixedLocator(nice_log_ticks(lo, hi)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    axis.set_minor_locator(NullLocator())


def _number_worst(ax, pairs, measured, predicted, count: int = 3, min_error: float = 0.1) -> str:
    """Number the `count` worst candidates off by more than `min_error` beside their markers; return the key."""
    errors = np.array([(pr - me) / me for pr, me in zip(predicted, measured)])
    worst = [i for i in np.argsort(-np.abs(errors))[:count] if abs(errors[i]) > min_error]
    offsets = ((6, 2), (-14, 2), (6, -13))  # right, left, below: close neighbours stay apart
    for n, i in enumerate(worst, 1):
        ax.annotate(
            str(n),
            (measured[i], predicted[i]),
            xytext=offsets[(n - 1) % 3],
            textcoords="offset points",
            fontsize=9,
            fontweight="bold",
            color="0.1",
        )
    return ", ".join(f"{n} = {pairs[i].label} ({100 * errors[i]:+.0f} %)" for n, i in enumerate(worst, 1))


def plot_metric(plt, validation: Validation, error: MetricError, path: Path) -> None:
    """Predicted against measured for one metric, log axes, the diagonal and +-10 %."""
    metric = error.metric
    pairs = [p for p in validation.pairs if metric.name in p.measured.values]
    markers = _fold_marker(validation.dataset.folds)
    fig, ax = plt.subplots(figsize=(6.4, 6.0), dpi=150)
    measured = [p.measured.values[metric.name] for p in pairs]
    predicted = [p.predicted(metric) for p in pairs]
    lo, hi = _log_limits(measured + predicted)
    diag = np.array([lo, hi])
    ax.plot(diag, diag, color="0.3", lw=1, label="predicted = measured")
    ax.plot(diag, diag * 1.1, color="0.6", lw=0.8, ls="--", label="±10 %")
    ax.plot(diag, diag / 1.1, color="0.6", lw=0.8, ls="--")
    for fold, marker in markers.items():
        sel = [p for p in pairs if p.launch.fold == fold]
        if not sel:
            continue
        ax.scatter(
            [p.measured.values[metric.name] for p in sel],
            [p.predicted(metric) for p in sel],
            c=[block_colour(p.launch.block) for p in sel],
            marker=marker,
            s=46,
            edgecolors="0.15",
            linewidths=0.5,
            zorder=3,
        )
        ax.scatter([], [], marker=marker, c="0.7", edgecolors="0.15", label=f"fold {'x'.join(map(str, fold))}")
    worst = _number_worst(ax, pairs, measured, predicted)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    _set_log_axis(ax.xaxis, lo, hi)
    _set_log_axis(ax.yaxis, lo, hi)
    ax.set_aspect("equal")
    ax.set_xlabel(f"measured {metric.label} ({metric.unit})", fontsize=11)
    ax.set_ylabel(f"predicted {metric.label} ({metric.unit})", fontsize=11)
    ax.set_title(
        f"{validation.plot_title}\n{metric.label}: MAPE {error.mape_percent:.1f} % over {error.points} candidates",
        fontsize=11,
    )
    ax.grid(True, which="major", color="0.9")
    ax.legend(loc="upper left", fontsize=9, framealpha=0.9)
    notes = ([f"largest errors: {worst}"] if worst else []) + [COLOUR_NOTE]
    fig.text(0.5, 0.01, "\n".join(notes), ha="center", va="bottom", fontsize=7.5, color="0.2", linespacing=1.5)
    fig.tight_layout(rect=(0, 0.025 * (1 + len(notes)), 1, 1))
    fig.savefig(path)
    plt.close(fig)


#: the limiter breakdown shows at most this many candidates, the best predicted
LIMITER_PLOT_ROWS = 80
LIMITER_STYLE = {"DRAM": ("#1f77b4", "s"), "L2": ("#ff7f0e", "^"), "L1": ("#2ca02c", "D"), "FP": ("#9467bd", "v")}


def plot_limiters(plt, validation: Validation, path: Path) -> None:
    """Per candidate, best predicted first: the throughput each limiter alone allows; the lowest is the prediction."""
    pairs = sorted(validation.pairs, key=lambda p: (-p.candidate.prediction.glups, p.launch))[:LIMITER_PLOT_ROWS]
    n = len(pairs)
    fig, ax = plt.subplots(figsize=(7.5, 1.6 + 0.16 * n), dpi=150)
    y = np.arange(n)[::-1]
    limiters = list(pairs[0].candidate.prediction.seconds_per_lup)
    for name in limiters:
        colour, marker = LIMITER_STYLE.get(name, ("0.4", "o"))
        seconds = np.array([p.candidate.prediction.seconds_per_lup[name] for p in pairs])
        glups = np.where(seconds > 0, 1e-9 / np.where(seconds > 0, seconds, 1.0), np.nan)  # a zero term is not drawn
        binding = np.array([p.candidate.prediction.limiter == name for p in pairs])
        ax.scatter(
            glups[~binding], y[~binding], marker=marker, s=22, facecolors="none", edgecolors=colour, lw=0.9, label=name
        )
        ax.scatter(glups[binding], y[binding], marker=marker, s=30, color=colour, edgecolors="black", lw=0.6)
    timed = [(i, p) for i, p in enumerate(pairs) if "glups" in p.measured.values]
    if timed:
        ax.scatter(
            [p.measured.values["glups"] for _, p in timed],
            [y[i] for i, _ in timed],
            marker="x",
            s=30,
            color="black",
            label="measured",
            zorder=4,
        )
    ax.set_yticks(y)
    ax.set_yticklabels([p.label for p in pairs], fontsize=6.5, family="monospace")
    ax.set_ylim(-1, n)
    ax.scatter([], [], marker="o", s=30, color="0.5", edgecolors="black", lw=0.6, label="filled: the limiter")
    ax.set_xscale("log")
    lo, hi = ax.get_xlim()
    _set_log_axis(ax.xaxis, lo, hi)
    ax.set_xlabel("throughput each limiter alone allows (GLup/s)", fontsize=10)
    ax.set_ylabel("candidate: block bx x by x bz, fold fx x fy x fz (best predicted on top)", fontsize=9)
    ax.set_title(f"{validation.plot_title}: limiter breakdown per candidate", fontsize=10, pad=24)
    ax.grid(True, axis="x", which="major", color="0.9")
    ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=6, fontsize=8, frameon=False, handletextpad=0.2)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


# -- report --------------------------------------------------------------------------------------

#: the file of `write_report` that says the plots beside it are complete
REPORT_NAME = "report.md"


@dataclass(frozen=True)
class Report:
    path: Path
    plots: list[Path]
    note: str = ""


def _pairs_table(validation: Validation) -> list[str]:
    metrics = [e.metric for e in validation.errors]
    variant = any(p.variant for p in validation.pairs)
    head = (
        "| block | fold | "
        + ("variant | " if variant else "")
        + "predicted GLup/s | predicted limiter | "
        + " | ".join(f"{m.label} meas / pred ({m.unit})" for m in metrics)
        + " |"
    )
    lines = [head, "|" + "---|" * (4 + variant + len(metrics))]
    for p in sorted(validation.pairs, key=lambda p: (p.variant, p.launch.fold, p.launch.block)):
        cells = []
        for m in metrics:
            v = p.measured.values.get(m.name)
            cells.append("" if v is None else f"{v:.2f} / {p.predicted(m):.2f}")
        lines.append(
            f"| {'x'.join(map(str, p.launch.block))} | {'x'.join(map(str, p.launch.fold))} | "
            + (f"{p.variant} | " if variant else "")
            + f"{p.candidate.prediction.glups:.2f} | {p.candidate.prediction.limiter} | "
            + " | ".join(cells)
            + " |"
        )
    return lines


def write_report(validation: Validation, out_dir, *, command: str = "") -> Report:
    """`report.md` in `out_dir`, with one PNG per metric and the limiter breakdown when matplotlib is installed.

    Written into a temporary folder beside `out_dir` and moved there when complete
    (`outputs.replacing_folder`, report.md last): an interrupted run leaves the
    folder as it was, and of two runs into one folder the later to finish wins.
    """
    with replacing_folder(out_dir, last=REPORT_NAME) as temporary:
        plots, note = _write_report_files(validation, temporary, command)
    out = Path(out_dir)
    return Report(out / REPORT_NAME, [out / p.name for p in plots], note)


def _write_report_files(validation: Validation, out: Path, command: str) -> tuple[list[Path], str]:
    """The plots and report.md of `write_report` in `out`."""
    plt = _pyplot()
    plots: list[Path] = []
    note = ""
    if plt is None:
        note = "plots skipped: matplotlib is not installed (pip install matplotlib)"
    else:
        for e in validation.errors:
            plots.append(out / f"{e.metric.name}.png")
            plot_metric(plt, validation, e, plots[-1])
        plots.append(out / "limiters.png")
        plot_limiters(plt, validation, plots[-1])

    dev = validation.ranking.device
    lines = [
        f"# Validation: {validation.title}",
        "",
        f"Measured data: `{os.path.relpath(validation.dataset.path)}`, {len(validation.pairs)} launch candidates "
        f"(blocks x thread foldings). Device model: `{Path(dev.path).name}`.",
    ]
    if command:
        lines += ["", "Reproduce with", "", "```sh", command, "```"]
    if validation.warnings:
        lines += ["", "Warnings:", "", *(f"- {w}" for w in validation.warnings)]
    lines += [
        "",
        "## Error per metric",
        "",
        "Percentage error = (predicted - measured) / measured; MAPE is the mean of its absolute value.",
        "",
        "| metric | unit | points | MAPE % | mean error % | max error % | worst candidate |",
        "|---|---|---|---|---|---|---|",
    ]
    for e in validation.errors:
        lines.append(
            f"| {e.metric.label} | {e.metric.unit} | {e.points} | {e.mape_percent:.2f} | "
            f"{e.mean_error_percent:+.2f} | {e.max_error_percent:.1f} | {e.worst_label or e.worst.label} |"
        )
    items = [f"- {what}: **{value}**" for what, value in validation.quality_items()]
    lines += ["", "## Ranking by throughput", "", *(items or [validation.NO_THROUGHPUT.capitalize() + "."]), ""]
    lines += ["Predicted limiters: " + ", ".join(f"{k}: {v}" for k, v in validation.limiter_counts().items()) + ".", ""]
    if note:
        lines += [f"_{note}_", ""]
    else:
        lines += [
            "## Plots",
            "",
            f"Predicted against measured, log axes; {COLOUR_NOTE}; the marker shape gives the "
            "thread folding; numbers mark the largest errors.",
            "",
        ]
        for e in validation.errors:
            lines += [f"![{e.metric.label}: predicted against measured]({e.metric.name}.png)", ""]
        lines += [
            f"Limiter breakdown: for every candidate (the best {LIMITER_PLOT_ROWS} predicted if there are more), "
            "the throughput each limiter alone would allow; "
            "the lowest (filled marker) is the prediction.",
            "",
            "![limiter breakdown](limiters.png)",
            "",
        ]
    lines += ["## Every candidate", "", *_pairs_table(validation), ""]
    (out / REPORT_NAME).write_text("\n".join(lines))
    return plots, note
