"""Measured data sets: the schema shared by `measure`, `validate` and `calibrate` (`dataset`), and
Nsight Compute's counters (`ncu`). Timing kernels on a GPU is the generator adapter's part
(`pystencils_perf.adapters.pystencils.measure` for pystencils kernels)."""
