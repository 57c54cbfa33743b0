"""SPEC: the paper's 3D 25-point star stencil of range 4 on 640 x 512 x 512 points (double).

pystencils-perf rank examples/star3d_r4.py --device V100
"""

from pystencils_perf.catalog import star_3d_recipe

# assignments with their configuration: every thread folding is generated and compiled for its registers
kernel = star_3d_recipe(radius=4, domain=(640, 512, 512))
