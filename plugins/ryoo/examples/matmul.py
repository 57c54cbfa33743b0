"""Ryoo et al. (CGO'08) sec. 4: the matrix-multiplication example and the occupancy step of sec. 2.2, computed.

python3 plugins/ryoo/examples/matmul.py
"""

from pystencils_perf_ryoo import g80_occupancy, g80_parameters, g80_peak_gflops
from pystencils_perf_ryoo.paper import TiledMatmul

g80 = g80_parameters()
mm = TiledMatmul()
occ = mm.occupancy()
m = mm.metrics()
print(
    f"{g80['name']}: {g80['sm_count']} SMs x {g80['flops_per_sm_per_cycle']} FLOP/cycle x {g80['clock_ghz']} GHz "
    f"= {g80_peak_gflops():.1f} GFLOPS"
)
print(
    f"matmul {mm.matrix_size}^2, {mm.tile}x{mm.tile} tiles: {mm.threads_per_block} threads/block, "
    f"{mm.registers_per_thread} registers/thread, {mm.shared_memory_bytes} B shared memory/block"
)
print(f"  blocks per SM  B_SM = {occ.blocks_per_sm} (limited by {occ.limited_by})")
print(f"  warps/block    W_TB = {m.inputs.warps_per_block}")
print(
    f"  outer loop trip count = {mm.trip_count}, Regions = {mm.trip_count} x "
    f"({mm.barriers_per_iteration} barriers + {mm.load_groups_per_iteration} load pair) + 1 = {m.inputs.regions_per_thread}"
)
print(f"  Instr = {mm.instructions_per_thread} (PTX count from the paper), Threads = {m.inputs.threads}")
print(f"  Efficiency  = {m.efficiency:.3e}   (paper: 3.93e-12)")
print(f"  Utilization = {m.utilization:.2f}  printed {m.utilization:.0f}   (paper: 227)")

print("occupancy step (sec. 2.2): 256 threads/block, 4 KB shared memory")
for registers in (10, 11):
    o = g80_occupancy(256, registers, 4096)
    print(
        f"  {registers} registers/thread: {o.blocks_per_sm} blocks/SM ({o.blocks_per_sm * 256} threads, limited by {o.limited_by}); "
        f"{o.blocks_per_sm + 1} blocks would need {(o.blocks_per_sm + 1) * 256 * registers} of {g80['registers_per_sm']} registers"
    )
