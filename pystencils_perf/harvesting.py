"""`harvest`: the `KernelModel` of any generator's kernel, from the first adapter plugin that recognises it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .errors import HarvestError
from .plugins import BLOCK_ENV, blocked_adapters, get_plugin_manager

if TYPE_CHECKING:
    from .kernel import KernelModel


def harvest(kernel, *, domain_shape=None, align="base", field_strides=None, base_offsets_bytes=None) -> KernelModel:
    """Describe `kernel` (a pystencils GPU kernel, assignments, or whatever an adapter plugin takes).

    A `KernelModel` is returned as it is. See `HarvestOptions` for the keyword arguments.
    """
    from .kernel import HarvestOptions, KernelModel  # sympy: here, so that importing `rank` (a plugin) does not

    if isinstance(kernel, KernelModel):
        return kernel
    if isinstance(kernel, (list, tuple)) and not kernel:
        raise HarvestError(f"the kernel is empty: {kernel!r} holds no assignments")
    options = HarvestOptions(
        domain_shape=domain_shape,
        align=align,
        field_strides=dict(field_strides or {}),
        base_offsets_bytes=dict(base_offsets_bytes or {}),
    )
    model = get_plugin_manager().hook.perf_harvest(kernel=kernel, options=options)
    if model is None:
        blocked = blocked_adapters()
        what = f"a {type(kernel).__module__}.{type(kernel).__qualname__}"
        if blocked:
            plugins = f"plugins {', '.join(blocked)} are" if len(blocked) > 1 else f"plugin {blocked[0]} is"
            raise HarvestError(f"no adapter plugin recognises {what}: the adapter {plugins} blocked "
                               f"(--block-plugin or {BLOCK_ENV})")
        raise HarvestError(
            f"no adapter plugin recognises {what}; "
            "pass a pystencils GPU kernel, pystencils assignments, or install an adapter plugin"
        )
    _check_not_empty(model)
    return model


def _check_not_empty(model: KernelModel) -> None:
    """Refuse a kernel that updates no point (fields no larger than their ghost layers), before any candidate
    is rejected for folding or blocking more points than there are."""
    if model.lattice_updates > 0 and all(n > 0 for n in model.work_items):
        return
    fields = ", ".join(f"{f.name!r} of shape {f.shape}" for f in model.fields)
    raise HarvestError(f"kernel {model.name!r} updates no point: its interior is empty ({fields} "
                       f"leave nothing inside the ghost layers its accesses need)")
