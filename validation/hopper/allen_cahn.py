"""SPEC: the conservative Allen-Cahn phase-field LBM kernel (the paper's application) on 256^3 cells, a held-out Hopper set.

Measured blind after the model steps of the second H200 lease (validation/hopper/README.md).
"""

from pystencils_perf.catalog.lbm import allen_cahn_phase_field

kernel = allen_cahn_phase_field(domain=(256, 256, 256))
