"""SPEC: lbmpy's D3Q27 SRT stream-pull-collide kernel on 256^3 cells (double, fzyx), a Hopper probe.

27 pdfs loaded and stored per cell, each store a double off its 128-B lines (the ghost layer): measured blind to
the step that prices partly written lines by the warp stores an SM has in flight (validation/hopper/).
"""

import pystencils as ps
from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil, create_lb_update_rule

src, dst = ps.fields("src(27), dst(27): double[258, 258, 258]", layout="fzyx")
update_rule = create_lb_update_rule(
    lbm_config=LBMConfig(
        stencil=LBStencil(Stencil.D3Q27), method=Method.SRT, relaxation_rate=1.8, kernel_type="stream_pull_collide"
    ),
    lbm_optimisation=LBMOptimisation(symbolic_field=src, symbolic_temporary_field=dst),
)
kernel = ps.create_kernel(
    update_rule, ps.CreateKernelConfig(target=ps.Target.CUDA, ghost_layers=1, function_name="d3q27_srt")
)
