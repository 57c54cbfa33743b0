"""Tables shared by the convolution validations (A100, RTX A4000/A6000): ranking quality per row subset.

Both scripts rank every measured configuration once with the throughput model; its metrics hold
everything the paper's four limiters need, so the limiter model's prediction of the same candidates
is ``1 / max(FP, L1 banks, L2, DRAM)`` of `predict.limiter_times` (`limiters_prediction`), without
ranking again.
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from pystencils_perf.predict import Prediction, limiter_times
from pystencils_perf.validate import Validation, metric_errors, ranking_quality

HEADER = ("| rows | Spearman | predicted best / measured best | measured best's predicted rank | "
          "throughput MAPE % | mean error % | random pick (median) |", "|---|---|---|---|---|---|---|")


def shared_external_data(name: str) -> Path:
    """A measured data file of ``external/`` in the shared data folder: ``$PYSTENCILS_PERF_SHARED_DATA``, else
    ``shared/data`` beside the checkout."""
    root = Path(os.environ.get("PYSTENCILS_PERF_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
    return root / "external" / name


def variant_params(pair) -> dict[str, str]:
    """The tunable parameters of a pair's variant label (``name=value ...``)."""
    return dict(item.split("=") for item in pair.variant.split())


def tile(pair) -> tuple[int, int]:
    """(tile_size_x, tile_size_y) of a pair's variant label."""
    params = variant_params(pair)
    return int(params["tile_size_x"]), int(params["tile_size_y"])


def read_only(pair) -> int:
    return 1 if "read_only=1" in pair.variant else 0


def with_predictions(validation: Validation, predict) -> Validation:
    """The same pairs with predictions from `predict(pair) -> Prediction` (no re-estimation)."""
    pairs = [replace(p, candidate=replace(p.candidate, prediction=predict(p))) for p in validation.pairs]
    return Validation(validation.dataset, validation.ranking, pairs, metric_errors(pairs), ranking_quality(pairs))


class FloatFields:
    """What `limiter_times` reads of a kernel model: its fields' element sizes (the convolutions' floats)."""

    fields = (type("Field", (), {"element_bytes": 4})(),)


def limiters_prediction(pair, device) -> Prediction:
    """The limiter model's prediction of a throughput-model candidate, from its metrics (L1 named as the
    throughput model names it)."""
    times = limiter_times(FloatFields, device, pair.candidate.metrics)
    times = {("L1 banks" if k == "L1" else k): v for k, v in times.items()}
    limiter = max(times, key=times.get)
    return Prediction(1.0 / times[limiter], limiter, times)


def quality_row(title: str, v: Validation) -> str | None:
    q, e = v.quality, v.error("glups")
    if q is None:
        return None
    return (f"| {title}: {q.points} | {q.spearman:.3f} | {100 * q.best_fraction:.1f} % | "
            f"{q.measured_best_predicted_rank} | {e.mape_percent:.1f} | {e.mean_error_percent:+.1f} | "
            f"{100 * q.median_fraction:.1f} % |")


def summary(name: str, validation: Validation, subsets) -> list[str]:
    """The ranking and error numbers over `subsets`, (title, keep(pair)) pairs."""
    rows = [quality_row(title, validation.subset(keep)) for title, keep in subsets]
    return [f"### {name}", "", *HEADER, *[r for r in rows if r], ""]
