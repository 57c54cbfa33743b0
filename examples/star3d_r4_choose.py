"""The paper's first application end to end: the 3D 25-point star stencil of range 4.

pystencils generates the CUDA kernel on 640 x 512 x 512 points (double), and
pystencils-perf chooses its thread-block size and thread folding, once for a
V100 and once for an H100; each kernel is an ordinary pystencils ``GpuKernel``
whose launch configuration carries the choice.

    python3 examples/star3d_r4_choose.py
"""

import signal

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly

# pystencils creates its disk cache when it is imported, in ~/.cache/pystencils unless
# PYSTENCILS_CACHE_DIR names another folder: here a temporary one, removed at exit.
from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache()

import pystencils as ps  # noqa: E402

import pystencils_perf as pp  # noqa: E402
from pystencils_perf.catalog import star_3d_assignments  # noqa: E402

assignments = star_3d_assignments(radius=4, domain=(640, 512, 512))
config = ps.CreateKernelConfig(function_name="star3d_r4")

for device in ("V100", "H100"):
    kernel = pp.create_kernel(assignments, config, device=device)
    block, grid = kernel.get_launch_configuration().evaluate()
    print(kernel.metadata["pystencils_perf"].report(head=6))
    print(f"  launch of the generated kernel: block {block}, grid {grid}\n")
