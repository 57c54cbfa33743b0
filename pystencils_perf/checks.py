"""Kernels that rank, but would not run as ranked: a warning (`PerfWarning`) each, one line naming the problem.

The model prices a kernel's accesses; it does not ask whether the kernel is right. `rank` asks, in blocks of the
first launch it accepts:

- whether the fields fit into a GPU's memory at all (`LARGEST_GPU_MEMORY_BYTES`: device files record none);
- whether the code is in the language of the device's vendor (HIP code does not run on an NVIDIA GPU, nor
  CUDA on an AMD one);
- whether an access reaches outside its field (or its block's shared array), at every thread of the grid's
  first two and last two blocks along each axis, where a stencil's reach beyond the interior shows;
- whether a thread loads an element that another thread of those blocks stores (an in-place stencil): GPU
  threads run in no fixed order, so the value loaded is the old or the new one at random.
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import replace

import numpy as np
import sympy as sp

from .devices import Device
from .errors import PerfWarning
from .estimate.addresses import COORDS, BlockThreads, compile_kernel, guards_mask, offset_groups
from .kernel import BDIM, AccessKind, Field, KernelModel
from .launch import LaunchConfig, grid_limits

#: the most memory of any GPU in the device library (MI300X, 192 GB): device files record no memory size, so
#: fields larger than this fit on no GPU (and fields larger than a smaller GPU's memory go unnoticed)
LARGEST_GPU_MEMORY_BYTES = 192 * 10**9


def warn_about_kernel(model: KernelModel, block: tuple[int, int, int], device: Device) -> None:
    """A `PerfWarning` for each of `kernel_problems`."""
    for problem in kernel_problems(model, block, device):
        warnings.warn(problem, PerfWarning, stacklevel=3)


def kernel_problems(model: KernelModel, block: tuple[int, int, int], device: Device) -> list[str]:
    """What makes `model` wrong on `device`, launched in blocks of `block`: one line each (see the module).

    Only the accesses under the kernel's update guard (`KernelModel.domain`) are followed: an access under a guard
    of its own is a description's shorthand for conditions that its code states load by load (the convolution's
    one ``load_guard`` for a 15 x 15 window), or a copy loop's, which says nothing of where the update reads.
    """
    problems = [*_too_large(model), *_other_language(model, device)]
    grid = LaunchConfig(block).grid(model.work_items)
    edges = [sorted({b for b in (0, 1, n - 2, n - 1) if 0 <= b < n}) for n in grid]
    threads = BlockThreads(block, tuple(itertools.product(*edges)))
    if model.shared_accesses:  # a block's own array: every access under its guard, the copy's too
        shared = replace(model.shared_view(), fields=model.shared_arrays_for(block))
        groups = offset_groups(compile_kernel(shared, block).instructions)
        problems += _outside(shared, block, groups, threads, "shared array")
    followed = tuple(a for a in model.accesses if a.predicate == model.domain)
    if not followed:
        return problems
    code = model if len(followed) == len(model.accesses) else replace(model, accesses=followed)
    groups = offset_groups(compile_kernel(code, block).instructions)
    return problems + _outside(code, block, groups, threads, "field") + _races(code, block, groups, threads)


def _extent(f: Field) -> tuple[int, int]:
    """The lowest and the highest element of `f` (a stride may be negative)."""
    reach = [(n - 1) * s for n, s in zip(f.shape, f.strides)]
    return sum(min(0, r) for r in reach), sum(max(0, r) for r in reach)


def _too_large(model: KernelModel) -> list[str]:
    """Fields that no GPU holds: their ranking is of a kernel that cannot be launched at all."""
    total = sum((high - low + 1) * f.element_bytes for f in model.fields for low, high in [_extent(f)])
    if total <= LARGEST_GPU_MEMORY_BYTES:
        return []
    return [
        f"kernel {model.name!r}: its fields ({', '.join(f.name for f in model.fields)}) take {total:.3g} B, more "
        f"than any GPU's memory (the most in the device library is MI300X's {LARGEST_GPU_MEMORY_BYTES / 1e9:g} GB; "
        "device files record no memory size)"
    ]


def _other_language(model: KernelModel, device: Device) -> list[str]:
    """Code generated for the other vendor's GPUs: the model prices its accesses, but it does not run there."""
    runs = grid_limits(device).runtime
    if not model.language or model.language == runs:
        return []
    return [
        f"kernel {model.name!r} is {model.language} code, but {device.name} runs {runs} code: the ranking is of "
        f"a kernel that does not run there; generate it for {runs}"
    ]


def _access(model: KernelModel, block, field: str, kind: AccessKind, coeffs: tuple, offset: int) -> str:
    """The access of `model` that compiles, with `block`, to the address ``coeffs . (tid, bid) + offset`` (in some
    iteration of its loops), as the model prints it."""
    coordinates = dict.fromkeys(COORDS, 0)
    for access in model.accesses:
        if access.field != field or access.kind is not kind:
            continue
        address = access.address.xreplace({**dict(zip(BDIM, block)), **model.block_values_for(block)})
        loops = [lp for lp in model.loops if lp.counter in address.free_symbols]
        for values in itertools.product(*(lp.values for lp in loops)):
            form = sp.expand(address.xreplace({lp.counter: v for lp, v in zip(loops, values)}))
            if (tuple(int(form.coeff(c)) for c in COORDS), int(form.xreplace(coordinates))) == (coeffs, offset):
                return f"the {kind.value} {field}[{access.address}]"
    return f"a {kind.value} of {field}"


def _index(f: Field, element: int) -> str:
    """`element` as an index of `f`, largest stride first: an element outside `f` is an index outside its shape."""
    if any(s <= 0 for s in f.strides):
        return f"element {element} of {f.name}"
    index, rest = [0] * len(f.shape), element
    for axis in sorted(range(len(f.strides)), key=lambda a: -f.strides[a]):
        index[axis], rest = divmod(rest, f.strides[axis])
    return f"{f.name}[{', '.join(map(str, index))}]"


def _outside(model: KernelModel, block, groups, threads: BlockThreads, what: str) -> list[str]:
    """An access that reaches outside its field (`what` says what the model's fields are), the first one per
    field."""
    fields, problems = {f.name: f for f in model.fields}, {}
    for (name, kind, coeffs, guards), offsets in groups:
        active = guards_mask(guards, threads)
        if name in problems or not active.any():
            continue
        values, (low, high) = threads.values(coeffs)[active], _extent(fields[name])
        for offset, element in (
            (offsets.min(), values.min() + offsets.min()),
            (offsets.max(), values.max() + offsets.max()),
        ):
            if not low <= element <= high:
                problems[name] = (
                    f"kernel {model.name!r}: {_access(model, block, name, kind, coeffs, int(offset))} "
                    f"reaches {_index(fields[name], int(element))}, outside {what} {name!r} of shape "
                    f"{fields[name].shape}: it {'reads' if kind is AccessKind.LOAD else 'writes'} "
                    f"memory that is not the {what.split()[-1]}'s"
                )
                break
    return list(problems.values())


def _addresses(coeffs, guards, offsets, threads: BlockThreads) -> tuple[np.ndarray, np.ndarray]:
    """The element each active thread accesses at each offset, and the thread (its position in `threads`)."""
    active = np.flatnonzero(guards_mask(guards, threads))
    values = threads.values(coeffs).ravel()[active]
    return (values[None, :] + offsets[:, None]).ravel(), np.tile(active, len(offsets))


def _races(model: KernelModel, block, groups, threads: BlockThreads) -> list[str]:
    """A load of an element that another thread stores, the first one per field."""
    fields = {kind: {name for (name, k, _, _), _ in groups if k is kind} for kind in AccessKind}
    problems = []
    for field in sorted(fields[AccessKind.STORE] & fields[AccessKind.LOAD]):
        race = _racing_load(field, groups, threads)
        if race is not None:
            problems.append(
                f"kernel {model.name!r}: {_access(model, block, field, AccessKind.LOAD, *race)} loads "
                f"elements of field {field!r} that other threads store (an in-place update): GPU threads "
                "run in no fixed order, so it reads old or new values at random; store into another field"
            )
    return problems


def _racing_load(field: str, groups, threads: BlockThreads) -> tuple[tuple, int] | None:
    """The first load of `field` (its coefficients and offset) of an element that another thread stores."""
    stores = [_addresses(c, g, o, threads) for (n, k, c, g), o in groups if n == field and k is AccessKind.STORE]
    elements, writers = (np.concatenate(part) for part in zip(*stores))
    order = np.lexsort((writers, elements))  # the writers of one element in order: another is first or last
    elements, writers = elements[order], writers[order]
    for (name, kind, coeffs, guards), offsets in groups:
        if name != field or kind is not AccessKind.LOAD:
            continue
        for offset in offsets.tolist():
            loaded, reader = _addresses(coeffs, guards, np.array([offset]), threads)
            first, stop = np.searchsorted(elements, loaded), np.searchsorted(elements, loaded, side="right")
            last = writers[np.maximum(stop - 1, 0)]
            if ((first < stop) & ((writers[np.minimum(first, len(writers) - 1)] != reader) | (last != reader))).any():
                return coeffs, offset
    return None
