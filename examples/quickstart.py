"""The README's quick start: a 3D 7-point stencil generated with the launch chosen for an H100."""

import signal

signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `| head` ends it quietly

# pystencils creates its disk cache when it is imported, in ~/.cache/pystencils unless
# PYSTENCILS_CACHE_DIR names another folder: here a temporary one, removed at exit.
from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache()

import pystencils as ps  # noqa: E402

import pystencils_perf as pp  # noqa: E402

src, dst = ps.fields("src, dst: double[258, 258, 258]")
neighbours = src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0] + src[0, 0, 1] + src[0, 0, -1]
update = ps.Assignment(dst[0, 0, 0], neighbours / 6)

kernel = pp.create_kernel([update], device="H100")  # an ordinary pystencils GpuKernel
print(kernel.get_launch_configuration().evaluate())  # (block, grid) it launches with
print(kernel.metadata["pystencils_perf"].report(head=3))
