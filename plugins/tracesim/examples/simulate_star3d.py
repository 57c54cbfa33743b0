"""Simulate launch candidates of the range-2 star stencil on a V100 and compare with the analytic estimator.

    python plugins/tracesim/examples/simulate_star3d.py

`simulate` gives one candidate's simulated volumes and time; `rank(..., model="tracesim")`
ranks candidates by the simulated time (the analytic metrics stay in the table).
"""

from pystencils_perf.tempcache import use_temporary_pystencils_cache  # noqa: E402

use_temporary_pystencils_cache("tracesim-example-")

from pystencils_perf_tracesim import simulate

import pystencils_perf as pp
from pystencils_perf.catalog import star_3d

model = pp.harvest(star_3d(radius=2, domain=(596, 596, 508)), align="interior")
launches = [pp.LaunchConfig((32, 4, 8)), pp.LaunchConfig((128, 8, 1)), pp.LaunchConfig((16, 8, 8), (1, 1, 2))]

print(f"{'candidate':>16} {'DRAM ld':>8} {'DRAM st':>8} {'L2 ld':>7} {'L2 st':>7} {'GLup/s':>7}  limiter")
for launch in launches:
    r = simulate(model, launch, "V100")
    print(
        f"{launch.label:>16} {r.dram_load_bytes_per_lup:>8.2f} {r.dram_store_bytes_per_lup:>8.2f} "
        f"{r.l2_load_bytes_per_lup:>7.2f} {r.l2_store_bytes_per_lup:>7.2f} {r.lups_per_second / 1e9:>7.2f}  {r.limiter}"
    )

ranking = pp.rank(model, "V100", blocks=[launch.block for launch in launches], folds=[(1, 1, 1)], model="tracesim")
print(ranking.table())
