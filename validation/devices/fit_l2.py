"""Fit per-GPU L2 capacity-miss curves and capacities to gpu-benches' published L2 curves.

Input: `gpu_benches.json` (see `extract_gpu_benches.py`): the gpu-l2-cache benchmark of
te42kyfo/gpu-benches reads a data set of total volume V over and over, every thread
block its own 512 kB part, and reports the effective bandwidth bw(V). Below the L2
capacity it runs at the L2 bandwidth, far above it at the DRAM bandwidth.

Method (per GPU):

1. L2 plateau ``B_l2``: median bw over 2 MB <= V <= max(L2/2, 4 MB) (below 2 MB L1 hits
   of neighbouring blocks inflate it, the repository's README says so for the H100; the
   4 MB keeps more than one point on the 4 MB L2 of the RX 6900 XT).
   DRAM plateau ``B_dram``: median bw over 4 L2 <= V <= 32 L2 (on the MI210 the
   bandwidth keeps falling up to about 8 L2). On a GPU with a cache behind the L2 (the
   RX 6900 XT's 128 MB Infinity Cache) this window lies in that cache: the L2's misses
   go there, so the curve is the L2's miss curve towards it, and the cache's own
   plateau (median over 4 L2 <= V <= LLC/2) is its bandwidth; DRAM is beyond 4 LLC.
2. Miss ratio, the DRAM share of the re-read bytes, from the time per byte with hits
   and misses served one after the other: ``1/bw = (1 - m)/B_l2 + m/B_dram``, so
   ``m = (1/bw - 1/B_l2) / (1/B_dram - 1/B_l2)``, clipped to [0, 1].
3. The capacity that avoids DRAM traffic, ``l2_dram_capacity``: the volume at which
   m first reaches 5 % (linear interpolation between the two measured volumes), at
   most the nominal L2 (on the L40 the 9 % steps between measured volumes put it past).
   Only volumes >= 2 MB are used from here on.
4. The estimator's curve ``R(x) = a*exp(-b*exp(-c*x))`` over ``x = V / l2_dram_capacity``
   (the estimator's L2 oversubscription), least squares.
   Residual: RMS and maximum of ``R(x) - m``.

The MI100's file is not fitted (`NOT_FITTED`): its bandwidth stays at the L2 plateau up to
about 20 MB, 2.5 times the 8 MB L2 of the ROCm specification table, which this method
cannot read as an L2 capacity; only its plateaus are reported.

The capacity that keeps L2 *bandwidth* (one partition on A100/H100) comes from the
gpu-cache benchmark, where every SM reads the same buffer: the largest per-SM volume
above the L1 whose bandwidth is still >= 80 % of that benchmark's L2 plateau.

Prints the numbers for the device files, writes `l2_fits.json` and one PNG per GPU.
Needs numpy, scipy and matplotlib.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from scipy.optimize import least_squares

HERE = Path(__file__).parent
KB, MB = 1024, 1024 * 1024
MISS_AT_CAPACITY = 0.05
BANDWIDTH_KEPT = 0.8
#: nominal L2 capacity of each measured GPU, bytes (datasheets / whitepapers, as in the device files)
NOMINAL_L2_BYTES = {
    "a100_80": 40 * MB,
    "h100_pcie": 50 * MB,
    "h200": 50 * MB,
    "l40": 96 * MB,
    "mi210": 8 * MB,
    "mi100": 8 * MB,
    "rx6900xt": 4 * MB,
}
#: nominal capacity of a cache behind the L2 (ROCm GPU hardware specifications table: Infinity Cache), bytes
LAST_LEVEL_CACHE_BYTES = {"rx6900xt": 128 * MB}
#: device file each measured GPU belongs to
DEVICE = {
    "a100_80": "A100-SXM4-80GB",
    "h100_pcie": "H100-PCIe-80GB",
    "h200": "GH200-96GB",
    "l40": "L40",
    "mi210": "MI210",
    "mi100": "MI100",
    "rx6900xt": "RX-6900-XT",
}
#: files whose L2 curve is not fitted, and why
NOT_FITTED = {"mi100": "plateau up to ~20 MB, 2.5x the 8 MB L2: not readable as an L2 capacity"}
#: the V100 curve of the estimator's authors (Ernst et al., JPDC 2023), for comparison in the plots
V100_CURVE = (0.5, 13.0, 1.8)


@dataclass(frozen=True)
class L2Fit:
    gpu: str
    device: str
    file: str
    l2_plateau_gbs: float
    dram_plateau_gbs: float
    l2_dram_capacity_bytes: int
    l2_dram_capacity_fraction: float
    a: float
    b: float
    c: float
    points: int
    rms_residual: float
    max_residual: float


def gompertz(x, a, b, c):
    return a * np.exp(-b * np.exp(-c * np.asarray(x, dtype=float)))


def miss_ratio(gbs: np.ndarray, l2_gbs: float, dram_gbs: float) -> np.ndarray:
    m = (1 / gbs - 1 / l2_gbs) / (1 / dram_gbs - 1 / l2_gbs)
    return np.clip(m, 0.0, 1.0)


def crossing(volume: np.ndarray, m: np.ndarray, level: float) -> float:
    """First volume at which m reaches `level`, interpolated linearly between measured volumes."""
    i = int(np.argmax(m >= level))
    if i == 0:
        raise ValueError("miss ratio already at the level at the smallest volume")
    v0, v1, m0, m1 = volume[i - 1], volume[i], m[i - 1], m[i]
    return float(v0 + (level - m0) * (v1 - v0) / (m1 - m0))


def plateaus(gpu: str, table: dict) -> dict:
    """Median bandwidths (GB/s) of the L2, of what serves its misses, and of DRAM behind a last-level cache."""
    volume = np.array(table["total_kb"], dtype=float) * KB
    gbs = np.array(table["gbs"], dtype=float)
    l2 = NOMINAL_L2_BYTES[gpu]
    found = {
        "l2_plateau_gbs": float(np.median(gbs[(volume >= 2 * MB) & (volume <= max(l2 / 2, 4 * MB))])),
        "l2_miss_plateau_gbs": float(np.median(gbs[(volume >= 4 * l2) & (volume <= 32 * l2)])),
    }
    if gpu in LAST_LEVEL_CACHE_BYTES:
        llc = LAST_LEVEL_CACHE_BYTES[gpu]
        found["last_level_cache_plateau_gbs"] = float(np.median(gbs[(volume >= 4 * l2) & (volume <= llc / 2)]))
        found["dram_plateau_gbs"] = float(np.median(gbs[volume >= 4 * llc]))
    return found


def fit_l2(gpu: str, table: dict) -> tuple[L2Fit, dict]:
    volume = np.array(table["total_kb"], dtype=float) * KB
    gbs = np.array(table["gbs"], dtype=float)
    l2 = NOMINAL_L2_BYTES[gpu]
    levels = plateaus(gpu, table)
    l2_gbs, dram_gbs = levels["l2_plateau_gbs"], levels["l2_miss_plateau_gbs"]
    used = volume >= 2 * MB
    volume, gbs = volume[used], gbs[used]
    m = miss_ratio(gbs, l2_gbs, dram_gbs)
    capacity = min(crossing(volume, m, MISS_AT_CAPACITY), l2)  # the data's resolution may place it past the L2
    x = volume / capacity

    def residual(p):
        return gompertz(x, *p) - m

    sol = least_squares(residual, x0=(1.0, 5.0, 2.0), bounds=([0.0, 1e-6, 1e-3], [1.0, 1e9, 100.0]))
    a, b, c = (float(f"{v:.4g}") for v in sol.x)
    r = gompertz(x, a, b, c) - m
    fit = L2Fit(
        gpu,
        DEVICE[gpu],
        table["file"],
        round(l2_gbs, 1),
        round(dram_gbs, 1),
        round(capacity),
        round(capacity / l2, 3),
        a,
        b,
        c,
        len(x),
        round(float(np.sqrt(np.mean(r**2))), 4),
        round(float(np.max(np.abs(r))), 4),
    )
    return fit, {"volume": volume, "gbs": gbs, "m": m}


def bandwidth_capacity(table: dict, l1_bytes_per_sm: float) -> tuple[int, float, float]:
    """(capacity bytes, near-L2 GB/s, far GB/s) from gpu-cache: where the shared-buffer L2 bandwidth drops."""
    volume = np.array(table["per_sm_kb"], dtype=float) * KB
    gbs = np.array(table["gbs"], dtype=float)
    l2_region = volume >= 4 * l1_bytes_per_sm
    near = float(np.median(gbs[l2_region & (volume <= 16 * MB)]))
    kept = l2_region & (gbs >= BANDWIDTH_KEPT * near)
    last = int(np.flatnonzero(kept)[-1])
    far = float(np.median(gbs[last + 1 :])) if last + 1 < len(gbs) else float("nan")
    return int(volume[last]), near, far


def plot(fit: L2Fit, series: dict, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    x = series["volume"] / fit.l2_dram_capacity_bytes
    grid = np.geomspace(x.min(), x.max(), 400)
    fig, (ax_m, ax_bw) = plt.subplots(1, 2, figsize=(11, 4))
    ax_m.plot(x, series["m"], "o", ms=4, label="from gpu-benches bw (miss ratio)")
    ax_m.plot(
        grid,
        gompertz(grid, fit.a, fit.b, fit.c),
        "-",
        label=f"fit a={fit.a:g} b={fit.b:g} c={fit.c:g}\nRMS {fit.rms_residual:.3f}, max {fit.max_residual:.3f}",
    )
    ax_m.plot(grid, gompertz(grid, *V100_CURVE), "--", color="grey", label="V100 curve (borrowed until now)")
    ax_m.set(
        xscale="log",
        xlabel="V / l2_dram_capacity (L2 oversubscription)",
        ylabel="DRAM share of re-reads",
        title=f"{fit.device}: L2 capacity-miss curve",
    )
    ax_m.axvline(1.0, color="k", lw=0.5)
    ax_m.legend(fontsize=7)
    model_gbs = 1 / (
        (1 - gompertz(x, fit.a, fit.b, fit.c)) / fit.l2_plateau_gbs
        + gompertz(x, fit.a, fit.b, fit.c) / fit.dram_plateau_gbs
    )
    mb = series["volume"] / MB
    ax_bw.plot(mb, series["gbs"], "o", ms=4, label=f"measured ({fit.file})")
    ax_bw.plot(mb, model_gbs, "-", label="fitted curve, as bandwidth")
    ax_bw.axvline(
        fit.l2_dram_capacity_bytes / MB,
        color="k",
        lw=0.5,
        label=f"l2_dram_capacity {fit.l2_dram_capacity_bytes / MB:.1f} MiB",
    )
    ax_bw.axvline(
        NOMINAL_L2_BYTES[fit.gpu] / MB, color="r", lw=0.5, label=f"nominal L2 {NOMINAL_L2_BYTES[fit.gpu] / MB:.0f} MiB"
    )
    ax_bw.set(xscale="log", xlabel="data volume, MiB", ylabel="GB/s", title="gpu-l2-cache bandwidth")
    ax_bw.set_ylim(bottom=0)
    ax_bw.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)


def v100_l1_check(table: dict, out: Path) -> str:
    """The same method on gpu-cache's L1 curve of the V100, against the authors' V100 L1 curve fitted to stencils.

    A check of the method, not a device number: if a benchmark-derived curve differs
    from the stencil-derived one where both exist, the benchmark fits elsewhere are
    not drop-in replacements for stencil fits.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    l1 = L1_BYTES_PER_SM["v100"]
    volume = np.array(table["per_sm_kb"], dtype=float) * KB
    gbs = np.array(table["gbs"], dtype=float)
    l1_gbs = float(np.median(gbs[volume <= l1 / 2]))
    l2_gbs = float(np.median(gbs[(volume >= 4 * l1) & (volume <= 16 * MB)]))
    m = miss_ratio(gbs, l1_gbs, l2_gbs)
    x = volume / l1
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.plot(x, m, "o", ms=4, label=f"gpu-benches {table['file']} (miss ratio)")
    grid = np.geomspace(x.min(), x.max(), 400)
    ax.plot(grid, gompertz(grid, *V100_L1_CURVE), "--", color="grey", label="authors' V100 L1 curve (stencil fit)")
    ax.set(
        xscale="log",
        xlabel="V / L1 capacity (L1 oversubscription)",
        ylabel="L2 share of re-reads",
        title="V100 L1: benchmark against the stencil fit",
    )
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    plt.close(fig)
    at = {v: float(np.interp(v, x, m)) for v in (1.5, 4.0)}
    return (
        f"V100 L1 (gpu-cache, L1 {l1_gbs:.0f} GB/s, L2 {l2_gbs:.0f} GB/s): miss ratio at x = 1.5: benchmark {at[1.5]:.2f}, "
        f"authors {gompertz(1.5, *V100_L1_CURVE):.2f}; at x = 4: benchmark {at[4.0]:.2f}, authors {gompertz(4.0, *V100_L1_CURVE):.2f}"
    )


V100_L1_CURVE = (0.73, 4.6, 0.34)
L1_BYTES_PER_SM = {
    "v100": 128 * KB,
    "a100_80": 192 * KB,
    "a40": 128 * KB,
    "h100_pcie": 256 * KB,
    "l40": 128 * KB,
    "mi210": 16 * KB,
    "mi100": 16 * KB,
}


def main() -> None:
    data = json.loads((HERE / "gpu_benches.json").read_text())
    fits = []
    print(f"gpu-benches commit {data['commit']}")
    print(
        f"{'device':<16} {'L2 GB/s':>8} {'DRAM GB/s':>9} {'C_dram MiB':>10} {'/L2':>5}  {'a':>6} {'b':>8} {'c':>6} {'pts':>4} {'RMS':>6} {'max':>6}"
    )
    levels = {
        gpu: {"file": table["file"], **{k: round(v, 1) for k, v in plateaus(gpu, table).items()}}
        for gpu, table in data["benchmarks"]["gpu-l2-cache"].items()
    }
    for gpu, table in data["benchmarks"]["gpu-l2-cache"].items():
        if gpu in NOT_FITTED:
            print(
                f"{DEVICE[gpu]:<16} {levels[gpu]['l2_plateau_gbs']:>8.0f} {levels[gpu]['l2_miss_plateau_gbs']:>9.0f}  not fitted: {NOT_FITTED[gpu]}"
            )
            continue
        fit, series = fit_l2(gpu, table)
        fits.append(fit)
        print(
            f"{fit.device:<16} {fit.l2_plateau_gbs:>8.0f} {fit.dram_plateau_gbs:>9.0f} {fit.l2_dram_capacity_bytes / MB:>10.2f} "
            f"{fit.l2_dram_capacity_fraction:>5.2f}  {fit.a:>6.4g} {fit.b:>8.4g} {fit.c:>6.4g} {fit.points:>4} {fit.rms_residual:>6.3f} {fit.max_residual:>6.3f}"
        )
        plot(fit, series, HERE / f"l2_curve_{gpu}.png")
    for gpu, found in levels.items():
        if "last_level_cache_plateau_gbs" in found:
            print(
                f"{DEVICE[gpu]}: last-level cache {found['last_level_cache_plateau_gbs']:.0f} GB/s, DRAM behind it {found['dram_plateau_gbs']:.0f} GB/s"
            )
    print("\ngpu-cache (all SMs read one buffer): L2 bandwidth capacity")
    caps = {}
    for gpu, table in data["benchmarks"]["gpu-cache"].items():
        cap, near, far = bandwidth_capacity(table, L1_BYTES_PER_SM[gpu])
        caps[gpu] = {
            "file": table["file"],
            "l2_bandwidth_capacity_bytes": cap,
            "near_gbs": round(near, 1),
            "far_gbs": round(far, 1),
        }
        print(f"{gpu:<10} kept up to {cap / MB:6.2f} MiB  near {near:7.0f} GB/s  beyond {far:7.0f} GB/s")
    print("\n" + v100_l1_check(data["benchmarks"]["gpu-cache"]["v100"], HERE / "l1_check_v100.png"))
    out = {
        "gpu_benches_commit": data["commit"],
        "l2_fits": [asdict(f) for f in fits],
        "l2_bandwidth_capacity": caps,
        "plateaus": levels,
    }
    (HERE / "l2_fits.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
