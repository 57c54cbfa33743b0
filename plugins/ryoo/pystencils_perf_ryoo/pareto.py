"""The Pareto-optimal subset of (Efficiency, Utilization) (CGO'08 sec. 5.2; R6 of SEED_MODELS.md sec. 3).

Usable on any list: give the items and their `RyooMetrics`. A point survives
unless another has Efficiency and Utilization at least as large, one of them
strictly; exact duplicates all survive (the paper measures clusters of equal points).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import groupby
from typing import Generic, TypeVar

from .metrics import RyooMetrics

T = TypeVar("T")


@dataclass(frozen=True)
class Dominated(Generic[T]):
    item: T
    metrics: RyooMetrics
    #: one configuration that dominates it, with its metrics
    by: T
    by_metrics: RyooMetrics

    @property
    def reason(self) -> str:
        return f"Ryoo-dominated: {self.metrics.describe()} <= {self.by_metrics.describe()} of {_label(self.by)}"


@dataclass(frozen=True)
class ParetoResult(Generic[T]):
    survivors: list[T]
    dominated: list[Dominated[T]]

    @property
    def reduction(self) -> float:
        """R7: the fraction of the configurations the filter removes."""
        total = len(self.survivors) + len(self.dominated)
        return len(self.dominated) / total if total else 0.0


def _label(item) -> str:
    launch = getattr(item, "launch", item)
    return getattr(launch, "label", str(launch))


def pareto_filter(items: Sequence[T], metrics: Sequence[RyooMetrics]) -> ParetoResult[T]:
    """Split `items` into the Pareto-optimal ones and the dominated ones (with a dominator each); order is kept.

    A sweep by decreasing Efficiency: a point is dominated if a point of strictly
    larger Efficiency has at least its Utilization, or one of equal Efficiency has more.
    """
    if len(items) != len(metrics):
        raise ValueError(f"{len(items)} items but {len(metrics)} metrics")
    order = sorted(range(len(items)), key=lambda i: (-metrics[i].efficiency, -metrics[i].utilization))
    dominator: dict[int, int] = {}
    best_so_far = None  # index of the largest Utilization among strictly larger Efficiencies
    for _, group in groupby(order, key=lambda i: metrics[i].efficiency):
        group = list(group)
        top = group[0]  # largest Utilization of this Efficiency
        for i in group:
            if best_so_far is not None and metrics[best_so_far].utilization >= metrics[i].utilization:
                dominator[i] = best_so_far
            elif metrics[top].utilization > metrics[i].utilization:
                dominator[i] = top
        if best_so_far is None or metrics[top].utilization > metrics[best_so_far].utilization:
            best_so_far = top
    survivors = [items[i] for i in range(len(items)) if i not in dominator]
    dominated = [Dominated(items[i], metrics[i], items[j], metrics[j]) for i, j in sorted(dominator.items())]
    return ParetoResult(survivors, dominated)
