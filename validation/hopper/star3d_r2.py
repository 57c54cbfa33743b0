"""SPEC: the 3D star stencil of radius 2 on 640 x 512 x 512 points (double), a blind check of the GH100 devices'
older-wave curve (fitted on the H200's star r=4 counters; validation/hopper/README.md)."""

from pystencils_perf.catalog import star_3d_recipe

kernel = star_3d_recipe(radius=2, domain=(640, 512, 512))
