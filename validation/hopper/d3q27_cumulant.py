"""SPEC: lbmpy's compressible D3Q27 cumulant stream-pull-collide kernel on 256^3 cells (double), a held-out Hopper set.

Measured blind after the model steps of the second H200 lease (validation/hopper/README.md).
"""

from pystencils_perf.catalog.lbm import d3q27_cumulant

kernel = d3q27_cumulant(domain=(256, 256, 256))
