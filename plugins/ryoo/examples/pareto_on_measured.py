"""What Ryoo's Pareto filter keeps of two measured spaces, and whether the measured best survives.

    python3 plugins/ryoo/examples/pareto_on_measured.py

V100: the 3D range-2 star of validation/data/v100 (90 block/fold configurations, measured
DRAM and L2 volumes, no times): "best" can only mean the lowest measured volume.
A100: Kernel Tuner's 15x15 convolution without shared memory (times per block and
tile size); its instruction counts follow from the kernel's structure.
"""

import csv
import math
import sys
from dataclasses import dataclass
from pathlib import Path

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("pystencils-perf-ryoo-")

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import star_3d  # noqa: E402
from pystencils_perf.estimate.volumes import occupancy  # noqa: E402
from pystencils_perf_ryoo import RyooInputs, pareto_filter, prune_candidates, ryoo_metrics, warps_per_block  # noqa: E402

DATA = Path(__file__).resolve().parents[3] / "validation" / "data"
V100_CSV = DATA / "v100" / "v100_star3d_r2_1024_folding.csv"
A100_CSV = DATA / "external" / "a100_convolution15_noshmem.csv"


def v100_star() -> None:
    rows = list(csv.DictReader(open(V100_CSV)))
    measured = {
        pp.LaunchConfig((int(r["bx"]), int(r["by"]), int(r["bz"])), (int(r["fx"]), int(r["fy"]), int(r["fz"]))): r
        for r in rows
    }
    model = pp.harvest(star_3d(radius=2, domain=(596, 596, 508)), align="interior")
    ranking = pp.rank(
        model, "V100", blocks=sorted({l.block for l in measured}), folds=sorted({l.fold for l in measured})
    )
    candidates = [c for c in ranking.candidates if c.launch in measured]
    result = prune_candidates(model, candidates)
    survivors = {c.launch for c in result.survivors}
    print(
        f"V100 star3d r2 596x596x508: {len(candidates)} measured candidates, {len(survivors)} survive the Ryoo filter "
        f"({result.reduction:.1%} removed)"
    )
    print("  survivors: " + ", ".join(sorted(l.label for l in survivors)))
    for what, columns in (
        ("DRAM", ("meas_dram_load_B_per_lup", "meas_dram_store_B_per_lup")),
        ("L2", ("meas_l2_load_B_per_lup", "meas_l2_store_B_per_lup")),
    ):
        volume = {launch: sum(float(row[c]) for c in columns) for launch, row in measured.items()}
        ordered = sorted(measured, key=volume.get)
        best = ordered[0]
        ranks = ", ".join(f"{l.label} {volume[l]:.2f} B/Lup (rank {ordered.index(l) + 1})" for l in sorted(survivors))
        print(
            f"  lowest measured {what} volume: {best.label} ({volume[best]:.2f} B/Lup): "
            f"{'survives' if best in survivors else 'dropped'}; survivors: {ranks}"
        )


@dataclass(frozen=True)
class ConvolutionLaunch:
    """One configuration of the 15x15 convolution on 4096x4096 outputs: each thread computes tile_x x tile_y outputs."""

    block: tuple[int, int]
    tile: tuple[int, int]
    read_only: bool

    FILTER_POINTS = 15 * 15
    OUTPUT = 4096

    @property
    def instructions_per_thread(self) -> int:
        """Per output: 225 loads and 225 FMAs, one store; address arithmetic not counted."""
        return math.prod(self.tile) * (2 * self.FILTER_POINTS + 1)

    @property
    def threads(self) -> int:
        return math.prod(-(-self.OUTPUT // (b * t)) * b for b, t in zip(self.block, self.tile))

    @property
    def label(self) -> str:
        return (
            f"block {self.block[0]}x{self.block[1]} tile {self.tile[0]}x{self.tile[1]}{' ro' if self.read_only else ''}"
        )


@dataclass(frozen=True)
class _NoResourceUsage:
    """Registers and shared memory of the convolution are not known here: occupancy from threads and blocks only."""

    registers_per_thread: None = None
    shared_memory_bytes: int = 0


def a100_convolution() -> None:
    device = pp.get_device("A100")
    rows = list(csv.DictReader(open(A100_CSV)))
    launches, seconds, metrics = [], {}, []
    for r in rows:
        launch = ConvolutionLaunch(
            (int(r["block_size_x"]), int(r["block_size_y"])),
            (int(r["tile_size_x"]), int(r["tile_size_y"])),
            r["read_only"] == "1",
        )
        threads_per_block = math.prod(launch.block)
        occ = occupancy(_NoResourceUsage(), threads_per_block, device)
        launches.append(launch)
        seconds[launch] = float(r["time_ms_mean"]) / 1e3
        metrics.append(
            ryoo_metrics(
                RyooInputs(
                    launch.instructions_per_thread,
                    1,
                    launch.threads,
                    warps_per_block(threads_per_block, device.warp_size),
                    occ.blocks_per_sm,
                )
            )
        )
    result = pareto_filter(launches, metrics)
    survivors = set(result.survivors)
    ordered = sorted(launches, key=seconds.get)
    fastest = ordered[0]
    best_survivor = min(survivors, key=seconds.get)
    print(
        f"A100 convolution 15x15 (no shared memory): {len(launches)} measured configurations on "
        f"{rows[0]['device_name']}, occupancy of {device.name} (registers unknown), {len(survivors)} survive "
        f"({result.reduction:.1%} removed)"
    )
    print(
        "  survivors: "
        + ", ".join(f"{l.label} ({seconds[l] * 1e3:.3f} ms)" for l in sorted(survivors, key=seconds.get))
    )
    print(
        f"  measured fastest: {fastest.label} ({seconds[fastest] * 1e3:.3f} ms): "
        f"{'survives' if fastest in survivors else 'dropped'}; fastest survivor {best_survivor.label} "
        f"({seconds[best_survivor] * 1e3:.3f} ms, {seconds[best_survivor] / seconds[fastest]:.2f}x the fastest, "
        f"measured rank {ordered.index(best_survivor) + 1} of {len(ordered)})"
    )


if __name__ == "__main__":
    for path in (V100_CSV, A100_CSV):
        if not path.is_file():
            sys.exit(
                f"measured data {path} not found: this example reads the pystencils-perf checkout's validation/data"
            )
    v100_star()
    a100_convolution()
