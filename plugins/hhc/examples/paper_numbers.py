"""Prajapati et al. (PPoPP'17): the numbers its tables determine, computed by the model.

python3 plugins/hhc/examples/paper_numbers.py
"""

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache()  # pystencils' cache, before pystencils is imported: never in the home directory

from pystencils_perf_hhc import (  # noqa: E402
    MIN_PITCH,
    ExperimentSet,
    Problem,
    c_iter_of,
    compute_floor_seconds,
    get_hhc_device,
    paper_stencils,
    problems,
    search_tiles,
    within_band,
)

#: sec. 6.2 (Fig. 5), measured on the GTX 980: best baseline tile and the model-chosen tile
MEASURED_BASELINE_SECONDS, MEASURED_MODEL_TILE_SECONDS = 19.8, 16.5

print("stencils from pystencils assignments:")
for s in paper_stencils():
    print(f"  {s.name:12s} {s.dims}D {s.shape} radius {s.radius}, {s.points} points, {s.flops_per_point} flops/point")

exp = ExperimentSet()
n2, n3 = exp.experiments(2), exp.experiments(3)
print(
    f"2D experiments: {len(exp.benchmarks(2))} benchmarks x {len(problems(2))} sizes x {len(exp.devices)} GPUs = {n2}"
)
print(
    f"3D experiments: {len(exp.benchmarks(3))} benchmarks x {len(problems(3))} sizes (T <= S) x {len(exp.devices)} GPUs = {n3}"
)
print("  3D sizes: " + ", ".join(f"{p.sizes[0]}^3 x {p.time_steps}" for p in problems(3)))
print(f"programs: {exp.points_per_experiment} x ({n2} + {n3}) = {exp.programs:,}")

gtx = get_hhc_device("GTX 980")
c_iter = c_iter_of(gtx, "gradient2d")
problem = Problem((8192, 8192), 8192)
floor = compute_floor_seconds(problem, gtx, c_iter)
print(
    f"Gradient-2D 8192^3 on the GTX 980: compute floor C_iter S1 S2 T / (n_SM n_V) = {floor:.2f} s; "
    f"measured: model-chosen tile {MEASURED_MODEL_TILE_SECONDS} s, best baseline {MEASURED_BASELINE_SECONDS} s "
    f"({(MEASURED_BASELINE_SECONDS - MEASURED_MODEL_TILE_SECONDS) / MEASURED_BASELINE_SECONDS:.1%} better)"
)
for label, min_pitch in (("with the minimum-tile guard", MIN_PITCH), ("without it (the paper's search)", None)):
    results = search_tiles(problem, gtx, c_iter, min_pitch=min_pitch)
    best = results[0]
    print(
        f"  {label}: {len(results)} feasible tiles, best (t_S1, t_S2, t_T) = "
        f"({best.tile.s1}, {best.tile.inner[0]}, {best.tile.time}) at {best.seconds:.2f} s "
        f"(k = {best.tiles_per_sm}, w = {best.tiles_per_wavefront}, N_w = {best.wavefronts}), "
        f"{len(within_band(results))} within 10 %"
    )
