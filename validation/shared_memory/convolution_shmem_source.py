"""SPEC: Kernel Tuner's shared-memory convolution as `../a100_convolution/convolution_shmem.py` describes it, with
a source of the kernel (`convolution_shmem.cu`, our own code of what that SPEC describes), so that each launch's
registers come from compiling its own code, every tunable parameter a ``-D`` macro as Kernel Tuner sets them.

`pystencils-perf tune convolution_shmem_source.py --replay CACHE` compiles the launches the model ranks first
(`tune.replay.spec_candidates`' ``compile_until_certain``); `benchmarks/bench_compile_order.py` times that
against compiling every launch.
"""

import runpy
from dataclasses import replace
from pathlib import Path

_HERE = Path(__file__).resolve().parent
_DESCRIBED = runpy.run_path(str(_HERE.parent / "a100_convolution" / "convolution_shmem.py"))
SOURCE = _HERE / "convolution_shmem.cu"

fixed_parameters = _DESCRIBED["fixed_parameters"]
#: useful outputs per launch (Kernel Tuner's problem_size)
lattice_updates = _DESCRIBED["lattice_updates"]


def kernel_for(params: dict):
    """The description of one tile, read_only and use_padding setting, with the source its launches compile."""
    macros = {name: int(params[name]) for name in ("tile_size_x", "tile_size_y", "read_only", "use_padding")}
    return replace(
        _DESCRIBED["kernel_for"](params),
        source=str(SOURCE),
        function="convolution15_shared",
        defines=macros,
        block_size_names=("block_size_x", "block_size_y"),
    )
