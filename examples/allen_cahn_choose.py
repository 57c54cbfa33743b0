"""The paper's second application end to end: the conservative Allen-Cahn phase-field LBM kernel.

lbmpy builds the interface-tracking step (D3Q15 pdfs with a 7-point
finite-difference stencil of the phase field, see
``pystencils_perf.catalog.lbm``) on 256^3 cells, and pystencils-perf generates
its CUDA kernel with the thread-block size and thread folding it chooses, once
for a V100 and once for an H100.

    python3 examples/allen_cahn_choose.py
"""

import signal

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly

# pystencils creates its disk cache when it is imported, in ~/.cache/pystencils unless
# PYSTENCILS_CACHE_DIR names another folder: here a temporary one, removed at exit.
from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache()

import pystencils as ps  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog.lbm import allen_cahn_phase_field_update_rule  # noqa: E402

update_rule = allen_cahn_phase_field_update_rule(domain=(256, 256, 256))
config = ps.CreateKernelConfig(function_name="allen_cahn_phase_field", ghost_layers=1)

for device in ("V100", "H100"):
    kernel = pp.create_kernel(update_rule, config, device=device)
    block, grid = kernel.get_launch_configuration().evaluate()
    print(kernel.metadata["pystencils_perf"].report(head=6))
    print(f"  launch of the generated kernel: block {block}, grid {grid}\n")
