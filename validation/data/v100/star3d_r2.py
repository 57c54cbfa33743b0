"""SPEC of the shared V100 measurements in this folder (see README.md beside it).

3D star stencil of range 2 on arrays of 600 x 600 x 512 doubles with 2 ghost
layers, i.e. 596 x 596 x 508 interior points; measured with the first interior
point aligned, so validate and calibrate with ``--align interior``:

    pystencils-perf validate validation/data/v100/v100_star3d_r2_1024_folding.csv \\
        --device V100 --spec validation/data/v100/star3d_r2.py --align interior --out validation/v100
"""

from pystencils_perf.catalog import star_3d_recipe

# assignments with their configuration: each measured folding is compiled (nvcc or NVRTC) for its registers
kernel = star_3d_recipe(radius=2, domain=(596, 596, 508))
