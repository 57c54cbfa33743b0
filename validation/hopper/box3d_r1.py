"""SPEC: the 3D 27-point box stencil of radius 1 on 512 x 384 x 256 points (float), a held-out Hopper data set.

Measured after the model steps of 2026-11-26 and before any later one: it judges them blind.
"""

import pystencils as ps

from pystencils_perf.adapters.pystencils import ApplyOptions
from pystencils_perf.catalog import box_3d_assignments

# assignments and their configuration, as `star_3d_recipe`: every folding is generated for the device
kernel = ApplyOptions(
    box_3d_assignments((512, 384, 256), dtype="float"), ps.CreateKernelConfig(function_name="box3d_r1")
)
