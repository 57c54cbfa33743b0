"""SPEC: the 3D 7-point star stencil (radius 1) on 640 x 512 x 512 points (double), a Hopper data set's second kernel."""

from pystencils_perf.catalog import star_3d_recipe

kernel = star_3d_recipe(radius=1, domain=(640, 512, 512))
