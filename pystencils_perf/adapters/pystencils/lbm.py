"""`create_lb_kernel`: lbmpy's lattice Boltzmann kernel with the launch configuration chosen for a device."""

from __future__ import annotations

from ...errors import ConfigurationError
from ...launch import DEFAULT_DEVICE
from .api import create_kernel


def create_lb_kernel(lbm_config=None, lbm_optimisation=None, config=None, *, device=DEFAULT_DEVICE, **choice):
    """Generate a ``GpuKernel`` of lbmpy's update rule with the launch best for a device (CUDA or HIP).

    Builds the update rule with ``lbmpy.create_lb_update_rule`` and hands it to
    `create_kernel`. LBM kernels store a whole population per cell: their default
    candidates have 512 threads per block.

    Parameters
    ----------
    lbm_config : lbmpy.LBMConfig, optional
        As for ``lbmpy.create_lb_update_rule``.
    lbm_optimisation : lbmpy.LBMOptimisation, optional
        As for ``lbmpy.create_lb_update_rule`` (``field_size`` fixes the domain).
    config : pystencils.CreateKernelConfig, optional
        Copied, its target set to the device's (CUDA for NVIDIA, HIP for AMD).
    device : str, path or Device, default `launch.DEFAULT_DEVICE` ("A100")
        Library name or alias, or a device file.
    **choice
        The candidate space and options of `create_kernel` (``threads``, ``blocks``,
        ``folds``, ``domain_shape`` for variable-size fields, ``nvcc``, ...).

    Returns
    -------
    pystencils GpuKernel
        As `create_kernel` returns it; ``kernel.metadata["pystencils_perf"]`` holds the
        `KernelChoice`.

    Examples
    --------
    >>> from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil
    >>> kernel = pp.create_lb_kernel(
    ...     LBMConfig(stencil=LBStencil(Stencil.D3Q19), method=Method.SRT, relaxation_rate=1.8),
    ...     LBMOptimisation(field_size=(64, 64, 64)), device="A100")  # doctest: +SKIP
    """
    from lbmpy import LBMConfig, create_lb_update_rule

    if lbm_config is not None and not isinstance(lbm_config, LBMConfig):  # else a TypeError deep in lbmpy
        raise ConfigurationError(
            f"lbm_config must be an lbmpy LBMConfig or None, got the {type(lbm_config).__name__} {lbm_config!r:.40}"
        )
    update_rule = create_lb_update_rule(lbm_config=lbm_config, lbm_optimisation=lbm_optimisation)
    return create_kernel(update_rule, config, device=device, **choice)
