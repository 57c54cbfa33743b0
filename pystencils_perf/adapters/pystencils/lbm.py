"""`create_lb_kernel`: lbmpy's lattice Boltzmann kernel with the launch configuration chosen for a device."""

from __future__ import annotations

from .api import create_kernel


def create_lb_kernel(lbm_config=None, lbm_optimisation=None, config=None, *, device="A100", **choice):
    """A CUDA ``GpuKernel`` of lbmpy's update rule, with the block size and folding best for `device`.

    :param lbm_config, lbm_optimisation: as for ``lbmpy.create_lb_update_rule``.
    :param config: a ``pystencils.CreateKernelConfig`` (target set to CUDA).
    :param choice: the candidate space and options of `pystencils_perf.create_kernel`
        (``threads``, ``blocks``, ``folds``, ``domain_shape`` for variable-size fields, ...).
    """
    from lbmpy import create_lb_update_rule

    update_rule = create_lb_update_rule(lbm_config=lbm_config, lbm_optimisation=lbm_optimisation)
    return create_kernel(update_rule, config, device=device, **choice)
