"""SPEC: the 15x15 convolution of `convolution.py`, only its configurations with tile 1x1 (120 per cache).

The whole space (1600-1800 configurations per cache) takes minutes to rank on two cores; this part of it
ranks in seconds, for examples and tutorials:

    pystencils-perf tune validation/a100_convolution/convolution_tile1x1.py --device RTX-A4000 \\
        --replay validation/data/external/a4000_convolution15_kernel_tuner_cache_noshmem.json.gz --budget 10
"""

import runpy
from pathlib import Path

_whole = runpy.run_path(str(Path(__file__).with_name("convolution.py")))

kernel_for = _whole["kernel_for"]
lattice_updates = _whole["lattice_updates"]
fixed_parameters = {**_whole["fixed_parameters"], "tile_size_x": 1, "tile_size_y": 1}
