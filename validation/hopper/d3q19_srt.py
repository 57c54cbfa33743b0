"""SPEC: lbmpy's D3Q19 SRT stream-pull-collide kernel on 256^3 cells (double, fzyx), a Hopper data set's LBM kernel."""

from pystencils_perf.catalog.lbm import d3q19_srt

kernel = d3q19_srt(domain=(256, 256, 256))
