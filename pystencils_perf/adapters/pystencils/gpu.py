"""Run and time launch candidates of a pystencils kernel on a CUDA GPU through cupy.

The kernel is compiled by pystencils' own cupy JIT (``GpuKernel.compile()``,
the same in pystencils 2.0 and 2.1). The block size is set on the compiled
wrapper's launch configuration (``trim_block_size`` of the default linear
mapping; block and grid of a manual one) and then checked by evaluating it:
pystencils must launch exactly the candidate's block. Each candidate gets a
fresh wrapper, because a wrapper caches its launch grid with its arguments.
Fields are aligned as modelled (`aligned_field`) and filled with random values
(`fill_random`); times are CUDA-event times of single launches after warm-up,
and the median is reported.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from ...errors import MeasurementError
from ...kernel import ALIGNMENT_BYTES, Field, KernelModel
from ...launch import LaunchConfig
from ...plugins import get_plugin_manager


def require_cupy(command: str = "measure", otherwise: str = ""):
    """The cupy module with at least one CUDA device, or a MeasurementError that says what is missing, which
    `command` needs it, and (`otherwise`) what can be done without it."""
    try:
        import cupy
    except Exception as e:  # ImportError, or a broken CUDA installation under it
        raise MeasurementError(
            f"{command} needs cupy and a CUDA GPU, but cupy cannot be imported ({type(e).__name__}: {e}); "
            "install it with pip install cupy-cuda12x (or pip install -e '.[gpu]' in a pystencils-perf checkout) "
            f"on a machine with an NVIDIA GPU{otherwise}"
        ) from None
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # cupy's CUDARuntimeError when there is no driver or device
        raise MeasurementError(
            f"{command} needs a CUDA GPU, but cupy finds none ({type(e).__name__}: {e}){otherwise}"
        ) from None
    if count < 1:
        raise MeasurementError(f"{command} needs a CUDA GPU, but cupy finds none{otherwise}")
    return cupy


def run_info(cp) -> dict[str, str]:
    """The GPU, CUDA driver and runtime versions, and the date, for every row of a data set."""
    props = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])

    def version(v: int) -> str:
        return f"{v // 1000}.{v % 1000 // 10}"

    return {
        "device": name,
        "driver": f"CUDA driver {version(cp.cuda.runtime.driverGetVersion())}, "
        f"runtime {version(cp.cuda.runtime.runtimeGetVersion())}",
        "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def _address(array) -> int:
    iface = getattr(array, "__cuda_array_interface__", None) or array.__array_interface__
    return int(iface["data"][0])


def aligned_field(xp, field: Field):
    """An uninitialised array of `field`'s shape and strides whose element 0 lies `base_offset_bytes` past a 256-B boundary.

    `xp` is cupy (or numpy, which the tests use).
    """
    dtype = np.dtype(field.dtype) if field.dtype else None
    if dtype is None or dtype.itemsize != field.element_bytes:
        raise MeasurementError(f"field {field.name!r}: cannot allocate elements of type {field.dtype!r}")
    if any(s < 0 for s in field.strides):
        raise MeasurementError(f"field {field.name!r}: negative strides {field.strides} are not supported")
    span_bytes = (1 + sum((n - 1) * s for n, s in zip(field.shape, field.strides))) * dtype.itemsize
    buffer = xp.empty(span_bytes + ALIGNMENT_BYTES, dtype=np.uint8)
    start = (field.base_offset_bytes - _address(buffer)) % ALIGNMENT_BYTES
    flat = buffer[start : start + span_bytes].view(dtype)
    strides = tuple(s * dtype.itemsize for s in field.strides)
    return xp.lib.stride_tricks.as_strided(flat, shape=field.shape, strides=strides)


def fill_random(xp, array, seed: int) -> None:
    """Random values in [0.5, 1.5) (integers in [1, 100)): never zeros, which could hide work or denormals."""
    rs = xp.random.RandomState(seed)
    if array.dtype.kind in "iu":
        values = rs.randint(1, 100, size=array.shape)
    else:
        values = rs.random_sample(array.shape) + 0.5
    array[...] = values.astype(array.dtype)


def allocate_fields(xp, model: KernelModel, seed: int = 0) -> dict:
    """Every field of `model`, aligned as modelled and filled with random data."""
    arrays = {}
    for i, f in enumerate(model.fields):
        arrays[f.name] = aligned_field(xp, f)
        fill_random(xp, arrays[f.name], seed + i)
    return arrays


def launch_parameter_values(launch_config, arrays: dict) -> dict:
    """Values of the launch configuration's parameters (field sizes and strides) for `arrays`."""
    from pystencils.codegen.properties import FieldShape, FieldStride

    values = {}
    for p in launch_config.parameters:
        for prop in p.properties:
            if isinstance(prop, FieldShape):
                values[p.name] = arrays[prop.field.name].shape[prop.coordinate]
            elif isinstance(prop, FieldStride):
                a = arrays[prop.field.name]
                values[p.name] = a.strides[prop.coordinate] // a.dtype.itemsize
        if p.name not in values:
            raise MeasurementError(f"launch parameter {p.name} is neither a field size nor a stride")
    return values


def configure_launch(launch_config, block, grid, arrays: dict) -> None:
    """Make a pystencils launch configuration launch `block` (and `grid`), and check that it does."""
    from pystencils.codegen.gpu_indexing import DynamicBlockSizeLaunchConfiguration, ManualLaunchConfiguration

    if isinstance(launch_config, DynamicBlockSizeLaunchConfiguration):
        launch_config.trim_block_size(tuple(block))
    elif isinstance(launch_config, ManualLaunchConfiguration):
        launch_config.block_size, launch_config.grid_size = tuple(block), tuple(grid)
    else:
        raise MeasurementError(f"cannot set the block size of a {type(launch_config).__name__}")
    used_block, used_grid = launch_config.evaluate(**launch_parameter_values(launch_config, arrays))
    if tuple(used_block) != tuple(block) or tuple(used_grid) != tuple(grid):
        raise MeasurementError(
            f"pystencils would launch block {tuple(used_block)} x grid {tuple(used_grid)}, "
            f"not the candidate's block {tuple(block)} x grid {tuple(grid)}"
        )


def runnable(kernel) -> tuple[object, object]:
    """The pystencils GPU kernel to run, and the recipe a `perf_apply` plugin regenerates it from (None: none).

    A generated kernel runs as it is but cannot be folded; pystencils
    assignments are generated here and are their own recipe.
    """
    if hasattr(kernel, "compile") and hasattr(kernel, "get_launch_configuration"):
        return kernel, None
    from .apply import ApplyOptions
    from .folding import create_folded_kernel

    if isinstance(kernel, ApplyOptions):
        return create_folded_kernel(kernel.assignments, kernel.config), kernel
    import pystencils as ps

    if isinstance(kernel, ps.AssignmentCollection) or (
        isinstance(kernel, (list, tuple)) and kernel and all(isinstance(a, ps.Assignment) for a in kernel)
    ):
        return create_folded_kernel(kernel), ApplyOptions(kernel)
    raise MeasurementError(
        f"measure compiles pystencils GPU kernels with cupy, not a {type(kernel).__name__}: "
        "define `kernel` (a Target.CUDA kernel) or `assignments` in the SPEC"
    )


def apply_fold(kernel, launch: LaunchConfig, apply_options):
    """The kernel that runs `launch`'s folding: `kernel` itself unfolded, else what a `perf_apply` plugin makes.

    A generated kernel fixes its folding, so folding means generating anew;
    `apply_options` is the recipe the adapter's `perf_apply` needs for that
    (for pystencils: the assignments and configuration).
    """
    if launch.fold == (1, 1, 1):
        return kernel
    name = getattr(kernel, "name", type(kernel).__name__)
    fold = "x".join(map(str, launch.fold))
    if apply_options is None:
        raise MeasurementError(
            f"thread folding {fold} regenerates kernel {name!r} from its assignments: define `assignments` "
            "instead of `kernel` in the SPEC, or measure with --fold 1x1x1"
        )
    applied = get_plugin_manager().hook.perf_apply(kernel=kernel, launch=launch, options=apply_options)
    if applied is None:
        raise MeasurementError(f"no plugin applies thread folding {fold} to kernel {name!r} (perf_apply hook)")
    return applied


@dataclass(frozen=True)
class Timing:
    launch: LaunchConfig
    times_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)


def time_launches(cp, run, warmup: int, repeats: int) -> tuple[float, ...]:
    """CUDA-event times (ms) of `repeats` single launches of `run`, after `warmup` untimed ones."""
    for _ in range(warmup):
        run()
    cp.cuda.Device().synchronize()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(float(cp.cuda.get_elapsed_time(start, end)))
    return tuple(times)


class GpuSession:
    """One kernel on this machine's GPU: fields allocated once, each candidate compiled and configured on demand.

    `kernel` and `apply_options` as `runnable` returns them.
    """

    def __init__(self, kernel, model: KernelModel, launches: list[LaunchConfig], apply_options=None, seed=0):
        self.cp = require_cupy()
        self.model, self.launches = model, launches
        self.kernels = {
            fold: apply_fold(kernel, LaunchConfig(launches[0].block, fold), apply_options)
            for fold in sorted({l.fold for l in launches})
        }
        self.work_items = {fold: model.folded(fold).work_items for fold in self.kernels}
        self.arrays = allocate_fields(self.cp, model, seed)

    @property
    def kernel_names(self) -> list[str]:
        return sorted({k.name for k in self.kernels.values()})

    def runner(self, launch: LaunchConfig):
        """A function that launches `launch` once."""
        wrapper = self.kernels[launch.fold].compile()  # a fresh wrapper: its own launch grid cache
        grid = launch.grid(self.work_items[launch.fold])
        configure_launch(wrapper.launch_config, launch.block, grid, self.arrays)
        arrays = self.arrays
        return lambda: wrapper(**arrays)

    def time(self, launch: LaunchConfig, warmup: int, repeats: int) -> Timing:
        return Timing(launch, time_launches(self.cp, self.runner(launch), warmup, repeats))

    def launch_each_once(self, launches: list[LaunchConfig]) -> None:
        """One launch per candidate, in order (what Nsight Compute profiles)."""
        for launch in launches:
            self.runner(launch)()
        self.cp.cuda.Device().synchronize()
