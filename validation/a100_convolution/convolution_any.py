"""SPEC: the 15x15 convolution of Kernel Tuner's caches with and without shared memory, `use_shmem` one more
tunable parameter (issue 56, item 4).

A configuration with ``use_shmem = 1`` is described by `convolution_shmem.py` (the shared tile, its copy and its
loads), one with ``use_shmem = 0`` by `convolution.py`; without shared memory ``use_padding`` changes nothing, so
both of its values are the same kernel. `pystencils-perf tune convolution_any.py --replay CACHE` tunes a whole
cache this way, as Kernel Tuner does.
"""

import runpy
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_WITHOUT = runpy.run_path(str(_HERE / "convolution.py"))
_WITH = runpy.run_path(str(_HERE / "convolution_shmem.py"))

fixed_parameters = {"use_cmem": 1, "filter_height": 15, "filter_width": 15}
#: useful outputs per launch (Kernel Tuner's problem_size)
lattice_updates = _WITHOUT["lattice_updates"]


def kernel_for(params: dict):
    """The description of one tile, read_only, use_shmem and use_padding setting."""
    return (_WITH if int(params["use_shmem"]) else _WITHOUT)["kernel_for"](params)
