"""What `rank` returns: the candidates with their predictions (`RankedCandidate`) and the `Ranking`, which prints as
a table and writes JSON (a contract other tools read: keep its keys) and CSV; and the built-in rule that picks among
candidates the model cannot tell apart (`tie_break`, the default `perf_select` plugin's, `selection`)."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field

from .devices import Device
from .devices.report import confidence_notes
from .launch import LaunchConfig
from .metrics import VOLUME_FIELDS, Metrics
from .outputs import write_text
from .predict import Prediction


@dataclass(frozen=True)
class RankedCandidate:
    launch: LaunchConfig
    prediction: Prediction
    metrics: Metrics

    def as_json(self) -> dict:
        m = self.metrics
        return {
            "block": list(self.launch.block),
            "fold": list(self.launch.fold),
            "glups": self.prediction.glups,
            "limiter": self.prediction.limiter,
            "bytes_per_lup": {
                "l2_load": m.l2_load_bytes_per_lup,
                "l2_store": m.l2_store_bytes_per_lup,
                "dram_load": m.dram_load_bytes_per_lup,
                "dram_store": m.dram_store_bytes_per_lup,
            },
            "l1_cycles_per_lup": m.l1_cycles_per_lup,
            "seconds_per_lup": dict(self.prediction.seconds_per_lup),
            "metrics": m.as_dict(),
        }


@dataclass
class Ranking:
    """The result of `rank`: candidates best first, and the ones rejected with their reason.

    Prints as a table (`table`), writes JSON (`as_json`, `write_json`: a contract other
    tools read) and CSV (`to_csv`).

    Attributes
    ----------
    device : Device
        The device the candidates were ranked for.
    kernel : str
        The kernel's name.
    candidates : list of RankedCandidate
        Every candidate that can run, highest predicted throughput first; each has a
        ``launch`` (`LaunchConfig`), a ``prediction`` (`Prediction`) and ``metrics``
        (`Metrics`).
    rejected : list of (LaunchConfig, str)
        The candidates a check or a filter rejected, each with its one-line reason.
    resources : dict
        Registers, spills and shared memory per fold (``(fx, fy, fz)`` -> `ResourceUsage`),
        where a `perf_resources` plugin compiled the kernel.
    resources_note : str
        Where the occupancy came from: measured registers per fold or per launch, or assumed.
    launch_resources : dict
        Registers, spills and shared memory per launch (`LaunchConfig` -> `ResourceUsage`), where a
        `perf_launch_resources` plugin compiled each launch's code (its block size compiled in).
    selected : RankedCandidate or None
        The candidate the `perf_select` plugins chose when `rank` (or `select`) last asked them; the table's row
        marked >, the tie line and the JSON's "selected" name it (`pick`).
    """

    device: Device
    kernel: str
    candidates: list[RankedCandidate]
    rejected: list[tuple[LaunchConfig, str]] = field(default_factory=list)
    #: registers, spills and shared memory per fold, where a `perf_resources` plugin compiled the kernel
    resources: dict = field(default_factory=dict)
    #: where the occupancy came from: measured registers per fold, or assumed
    resources_note: str = ""
    #: registers, spills and shared memory per launch, where a `perf_launch_resources` plugin compiled each
    launch_resources: dict = field(default_factory=dict)
    #: the candidate the `perf_select` plugins chose (`rank.select` sets it); None: the built-in rule's, `tie_break`
    selected: RankedCandidate | None = None

    @property
    def best(self) -> RankedCandidate:
        """The candidate predicted fastest (`select` breaks ties among `tied` by `TIE_BREAK`)."""
        return self.candidates[0]

    @property
    def pick(self) -> RankedCandidate:
        """The candidate `select` takes: what the `perf_select` plugins chose where `rank` or `select` asked them
        (`selected`), else the built-in rule's (`tie_break`)."""
        return self.selected if self.selected is not None else tie_break(self.tied, self.device.warp_size)

    @property
    def tied(self) -> list[RankedCandidate]:
        """The candidates within the model's measured error of the best: the model cannot order them."""
        best = self.best.prediction
        floor = best.lups_per_second * (1.0 - best.relative_error)
        return [c for c in self.candidates if c.prediction.lups_per_second >= floor]

    def tie_line(self) -> str:
        """What the table says about a tie at the top, or "" if the best stands alone."""
        tied = self.tied
        if len(tied) < 2:
            return ""
        chosen = self.pick  # what the `perf_select` plugins chose, as `as_json` and the table's > say
        why = (
            f"by {TIE_BREAK}"
            if chosen is tie_break(tied, self.device.warp_size)
            else "as an installed selection plugin (perf_select) chooses"
        )
        error = self.best.prediction.relative_error
        where = (
            f"lie within {error:.1%} of the best, the model's measured error"
            if error
            else "are predicted equally fast (the model states no error)"
        )
        return f"  {len(tied)} candidates (marked = or >) {where}: a tie; select() takes {chosen.launch.label} {why}"

    def as_json(self) -> dict:
        chosen = self.pick
        return {
            "device": self.device.name,
            "device_notes": confidence_notes(self.device),
            "resources": self.resources_note,
            "selected": {"block": list(chosen.launch.block), "fold": list(chosen.launch.fold)},
            "tied": len(self.tied),
            "kernel": self.kernel,
            "candidates": [c.as_json() for c in self.candidates],
            "rejected": [{"block": list(l.block), "fold": list(l.fold), "reason": r} for l, r in self.rejected],
        }

    def write_json(self, path) -> None:
        """`path` replaced by the JSON whole (`outputs.write_text`)."""
        write_text(path, json.dumps(self.as_json(), indent=1))

    def to_csv(self) -> str:
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(
            [
                "rank",
                "bx",
                "by",
                "bz",
                "fx",
                "fy",
                "fz",
                "glups",
                "limiter",
                "dram_load_B_per_lup",
                "dram_store_B_per_lup",
                "l2_load_B_per_lup",
                "l2_store_B_per_lup",
                "l1_cycles_per_lup",
            ]
        )
        for i, c in enumerate(self.candidates, 1):
            m = c.metrics
            w.writerow(
                [
                    i,
                    *c.launch.block,
                    *c.launch.fold,
                    f"{c.prediction.glups:.4f}",
                    c.prediction.limiter,
                    *(f"{m.value(k):.3f}" for k in (*VOLUME_FIELDS, "l1_cycles_per_lup")),
                ]
            )
        return out.getvalue()

    def terms_line(self) -> str:
        """The candidate `select` takes (its row marked >), its throughput and what limits it: the model's terms
        (`Prediction.seconds_per_lup`)."""
        pick = self.pick
        terms = ", ".join(f"{name} {1e12 * seconds:.1f}" for name, seconds in pick.prediction.seconds_per_lup.items())
        return (
            f"  > {pick.launch.label}, the pick: {pick.prediction.glups:.2f} GLup/s predicted; "
            f"picoseconds per update by term: {terms}"
        )

    def table(self, head: int | None = None) -> str:
        """One readable row per candidate, best first, with its limiter and volumes; with `head`, the first
        `head` rows and the pick's row (marked >) wherever it ranks."""
        rows = self.candidates if head is None else self.candidates[:head]
        pick = self.pick if self.candidates else None
        tied_candidates, tie_line = self.tied, self.tie_line()
        lines = [
            f"{self.kernel} on {self.device.name}: {len(self.candidates)} candidates"
            + (f", {len(self.rejected)} rejected" if self.rejected else ""),
            *(f"  device note: {note}" for note in confidence_notes(self.device)),
            *([f"  {self.resources_note}"] if self.resources_note else []),
            *([tie_line] if tie_line else []),
            f"{'#':>4} {'block':>12} {'fold':>7} {'GLup/s':>7} {'limiter':>7} "
            f"{'DRAM ld':>8} {'DRAM st':>8} {'L2 ld':>7} {'L2 st':>7} {'L1 cyc':>7} {'blk/SM':>6}",
            f"{'':>4} {'':>12} {'':>7} {'':>7} {'':>7} {'B/Lup':>8} {'B/Lup':>8} {'B/Lup':>7} {'B/Lup':>7} {'/Lup':>7}",
        ]
        tied = {id(c) for c in tied_candidates} if len(tied_candidates) > 1 else set()

        def row(i: int, c: RankedCandidate) -> str:
            m = c.metrics
            mark = ">" if c == pick else "=" if id(c) in tied else " "
            return (
                f"{mark}{i:>3} {'x'.join(map(str, c.launch.block)):>12} {'x'.join(map(str, c.launch.fold)):>7} "
                f"{c.prediction.glups:>7.2f} {c.prediction.limiter:>7} "
                f"{m.dram_load_bytes_per_lup:>8.2f} {m.dram_store_bytes_per_lup:>8.2f} "
                f"{m.l2_load_bytes_per_lup:>7.2f} {m.l2_store_bytes_per_lup:>7.2f} "
                f"{m.l1_cycles_per_lup:>7.3f} {m.blocks_per_sm:>6}"
            )

        lines += [row(i, c) for i, c in enumerate(rows, 1)]
        if head is not None and head < len(self.candidates):
            lines.append(f"  ... {len(self.candidates) - head} more")
            if pick in self.candidates[head:]:
                lines.append(row(self.candidates.index(pick) + 1, pick))
        if self.candidates:
            lines.append(self.terms_line())
        for launch, reason in self.rejected:
            lines.append(f"  rejected {launch.label}: {reason}")
        return "\n".join(lines)


#: how `select` orders candidates the model cannot tell apart (documented in docs/model/index.md)
TIE_BREAK = (
    "fewest idle lanes in partly filled warps, then most resident warps per SM, then least L2 load traffic "
    "(a squarer footprint), then predicted throughput"
)


def idle_lanes(launch, warp_size: int) -> int:
    """SIMT lanes a block leaves idle in its last, partly filled warp (a 57-thread block: 7 of 64)."""
    return -launch.threads_per_block % warp_size


def tie_break(tied: list[RankedCandidate], warp_size: int) -> RankedCandidate:
    """The tied candidate the default selection takes (`TIE_BREAK`).

    Idle lanes are hardware a block holds and does not use, whatever the model predicts for a
    memory-bound kernel; more resident warps hide latency the model may misjudge; less L1 -> L2
    traffic is what a squarer block footprint buys, and it is robust to the capacity curves'
    error. Registers count only through the occupancy they allow: fewer registers at the same
    occupancy took unfolded launches on Hopper where folded ones ran faster (docs/model/index.md,
    "Ties and the selection").
    """

    def key(c: RankedCandidate):
        m = c.metrics
        resident_warps = m.blocks_per_sm * -(-c.launch.threads_per_block // warp_size)
        return (
            idle_lanes(c.launch, warp_size),
            -resident_warps,
            round(m.l2_load_bytes_per_lup, 6),
            -c.prediction.lups_per_second,
            c.launch,
        )

    return min(tied, key=key)
