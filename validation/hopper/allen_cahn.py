"""SPEC: the conservative Allen-Cahn phase-field LBM kernel (the paper's application) on 256^3 cells, a held-out Hopper set.

Measured blind after the model steps of the second H200 lease (validation/hopper/README.md). Its update rule
and configuration, as `examples/allen_cahn_choose.py` builds them, so that every folding is generated.
"""

import pystencils as ps

from pystencils_perf.adapters.pystencils import ApplyOptions
from pystencils_perf.catalog.lbm import allen_cahn_phase_field_update_rule

kernel = ApplyOptions(
    allen_cahn_phase_field_update_rule(domain=(256, 256, 256)),
    ps.CreateKernelConfig(function_name="allen_cahn_phase_field", ghost_layers=1),
)
