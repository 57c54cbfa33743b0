"""Lattice Boltzmann CUDA kernels generated with lbmpy: D3Q19 SRT, D3Q27 cumulant, and the two steps of the
conservative Allen-Cahn phase-field model (each builder's docstring cites its method).

Every builder returns a lowered pystencils ``GpuKernel`` for ``Target.CUDA``
whose fields have a fixed size known at generation time: double precision,
``domain`` interior cells (x, y, z) plus one ghost layer on each side, and the
``fzyx`` layout (structure of arrays: one contiguous 3D array per population
or vector component, x fastest in memory) that lbmpy and waLBerla use for
GPUs.  The kernels iterate over the interior only; all model parameters are
numeric constants, so field accesses are the only memory traffic.
"""

import sympy as sp

import pystencils as ps
from pystencils import Assignment, CreateKernelConfig, Target
from pystencils.codegen import GpuKernel

from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil, create_lb_update_rule
from lbmpy.phasefield_allen_cahn.kernel_equations import (
    add_hydrodynamic_force,
    add_interface_tracking_force,
    hydrodynamic_force_assignments,
)
from lbmpy.phasefield_allen_cahn.parameter_calculation import AllenCahnParameters

__all__ = [
    "d3q19_srt",
    "d3q27_cumulant",
    "allen_cahn_phase_field",
    "allen_cahn_phase_field_update_rule",
    "allen_cahn_hydro",
]

GHOST_LAYERS = 1
LAYOUT = "fzyx"
RELAXATION_RATE = 1.8

#: Two-phase parameters (lattice units) of the Allen-Cahn kernels: heavy/light
#: density 1 / 0.001, dynamic viscosities 5e-3 / 5e-5, surface tension 1e-4,
#: mobility 0.02 (omega_phi = 1 / (0.5 + 3 M)), gravity -1e-5, interface width 5.
ALLEN_CAHN_PARAMETERS = AllenCahnParameters(
    density_heavy=1.0,
    density_light=0.001,
    dynamic_viscosity_heavy=5e-3,
    dynamic_viscosity_light=5e-5,
    surface_tension=1e-4,
    mobility=0.02,
    gravitational_acceleration=-1e-5,
    interface_thickness=5,
)


def _gpu_config(config, function_name):
    """Copy ``config`` (or a default one) and force the CUDA target and interior iteration."""
    cfg = CreateKernelConfig() if config is None else config.copy()
    cfg.target = Target.CUDA
    if cfg.function_name is None:
        cfg.function_name = function_name
    if cfg.ghost_layers is None and cfg.iteration_slice is None:
        cfg.ghost_layers = GHOST_LAYERS
    return cfg


def _fields(spec, domain):
    """Fixed-size double fields (``spec`` as in ``ps.fields``) for ``domain`` plus ghost layers."""
    if len(domain) != 3 or any(int(n) != n or n < 1 for n in domain):
        raise ValueError(f"domain must be three positive cell counts (x, y, z), got {domain!r}")
    shape = ", ".join(str(int(n) + 2 * GHOST_LAYERS) for n in domain)
    return ps.fields(f"{spec}: double[{shape}]", layout=LAYOUT)


def _two_field_kernel(lbm_config, domain, config, function_name):
    """Stream-pull-collide kernel of ``lbm_config`` on a ``src``/``dst`` pdf field pair."""
    q = lbm_config.stencil.Q
    src, dst = _fields(f"src({q}), dst({q})", domain)
    update_rule = create_lb_update_rule(
        lbm_config=lbm_config,
        lbm_optimisation=LBMOptimisation(symbolic_field=src, symbolic_temporary_field=dst),
    )
    return ps.create_kernel(update_rule, _gpu_config(config, function_name))


def d3q19_srt(domain=(64, 64, 64), *, config=None) -> GpuKernel:
    """D3Q19 SRT (BGK) stream-pull-collide kernel, relaxation rate 1.8, fields ``src``/``dst``.

    Single-relaxation-time, with two pdf fields, as in Bauer et al., "lbmpy: Automatic code generation for
    efficient parallel lattice Boltzmann methods", J. Comput. Sci. 49 (2021).
    """
    lbm_config = LBMConfig(
        stencil=LBStencil(Stencil.D3Q19),
        method=Method.SRT,
        relaxation_rate=RELAXATION_RATE,
        kernel_type="stream_pull_collide",
    )
    return _two_field_kernel(lbm_config, domain, config, "d3q19_srt")


def d3q27_cumulant(domain=(64, 64, 64), *, config=None) -> GpuKernel:
    """Compressible D3Q27 cumulant stream-pull-collide kernel, rate 1.8, fields ``src``/``dst``.

    The cumulant method of Geier et al. (Comput. Math. Appl. 70, 2015) in lbmpy's formulation, one fixed
    relaxation rate for the shear moments.
    """
    lbm_config = LBMConfig(
        stencil=LBStencil(Stencil.D3Q27),
        method=Method.CUMULANT,
        relaxation_rate=RELAXATION_RATE,
        compressible=True,
        kernel_type="stream_pull_collide",
    )
    return _two_field_kernel(lbm_config, domain, config, "d3q27_cumulant")


def _central_difference_normal(phase_field):
    """Interface normal of ``phase_field`` from 7-point central differences.

    Returns the subexpressions defining the gradient and its (regularised)
    norm, as in ``lbmpy.phasefield_allen_cahn.kernel_equations.
    normalized_isotropic_gradient_symbolic``, and the normal components.
    """
    gradient = sp.symbols("grad_C_:3")
    norm = sp.Symbol("grad_C_norm")
    subexpressions = []
    for d, g in enumerate(gradient):
        offset = tuple(int(i == d) for i in range(3))
        neg_offset = tuple(-i for i in offset)
        subexpressions.append(Assignment(g, (phase_field[offset] - phase_field[neg_offset]) / 2))
    subexpressions.append(Assignment(norm, sp.sqrt(sum(g**2 for g in gradient) + sp.Float(1e-32))))
    return subexpressions, [g / norm for g in gradient]


def allen_cahn_phase_field(domain=(64, 64, 64), *, config=None) -> GpuKernel:
    """Interface-tracking (phase-field) LB step of the conservative Allen-Cahn model.

    The model is that for immiscible two-phase flow at high density ratios of Fakhari et al. (Phys. Rev. E 96,
    053301, 2017) and Mitchell et al. (Int. J. Multiphase Flow 107, 2018), as generated with lbmpy in Holzer et
    al., "Highly efficient lattice Boltzmann multiphase simulations of immiscible fluids at high-density ratios
    on CPUs and GPUs through code generation", Int. J. High Perform. Comput. Appl. 35(4), 2021, and set up as in
    lbmpy's tutorial "The conservative Allen-Cahn model" and waLBerla's ``PhaseFieldAllenCahn`` showcase
    (``lbmpy.phasefield_allen_cahn``); `allen_cahn_hydro` is its other step.

    D3Q15 weighted MRT, stream-pull-collide from ``h`` to ``h_tmp`` with the
    velocity ``u`` as input; the interface-tracking force
    ``F = (1 - 4 (C - 1/2)^2) / (3 W) * n`` uses the interface normal of the
    phase field ``C`` from second-order central differences, the 7-point stencil
    (6 neighbours + centre); the new phase field (zeroth moment) is stored in ``C_tmp``.
    The pdfs are stored as they are (not zero-centred), so ``C_tmp`` is their sum.
    """
    update_rule = allen_cahn_phase_field_update_rule(domain)
    return ps.create_kernel(update_rule, _gpu_config(config, "allen_cahn_phase_field"))


def allen_cahn_phase_field_update_rule(domain=(64, 64, 64)):
    """The assignments of `allen_cahn_phase_field`, for generators that configure the kernel themselves."""
    params = ALLEN_CAHN_PARAMETERS
    stencil = LBStencil(Stencil.D3Q15)
    h, h_tmp = _fields(f"h({stencil.Q}), h_tmp({stencil.Q})", domain)
    u = _fields(f"u({stencil.D})", domain)
    C, C_tmp = _fields("C, C_tmp", domain)

    # first-order moments relax with omega_phi (sets the mobility), all others with 1
    rates = [0.0] + [params.omega_phi] * stencil.D + [1.0] * (stencil.Q - stencil.D - 1)
    lbm_config = LBMConfig(
        stencil=stencil,
        method=Method.MRT,
        weighted=True,
        relaxation_rates=rates,
        compressible=True,
        zero_centered=False,
        delta_equilibrium=False,
        force=sp.symbols(f"F_:{stencil.D}"),
        velocity_input=u,
        output={"density": C_tmp},
        kernel_type="stream_pull_collide",
    )
    update_rule = create_lb_update_rule(
        lbm_config=lbm_config,
        lbm_optimisation=LBMOptimisation(symbolic_field=h, symbolic_temporary_field=h_tmp),
    )

    normal_subexpressions, normal = _central_difference_normal(C)
    update_rule.subexpressions += normal_subexpressions
    width = params.symbolic_interface_thickness
    profile = (1 - 4 * (C.center - sp.Rational(1, 2)) ** 2) / width
    force = [sp.Rational(1, 3) * profile * n for n in normal]
    update_rule = add_interface_tracking_force(update_rule, force)
    return update_rule.new_with_substitutions(params.parameter_map())


def allen_cahn_hydro(domain=(64, 64, 64), *, config=None) -> GpuKernel:
    """Hydrodynamic LB step of the conservative Allen-Cahn model.

    D3Q27 incompressible weighted MRT, collide-stream-push from ``g`` to
    ``g_tmp``, relaxation rate interpolated between the two phases from ``C``,
    hydrodynamic force (surface tension, pressure, viscous and gravity terms)
    from isotropic D3Q27 finite differences of ``C`` and the velocity ``u``
    (read as the initial guess, then overwritten). `allen_cahn_phase_field`
    cites the model.
    """
    params = ALLEN_CAHN_PARAMETERS
    stencil = LBStencil(Stencil.D3Q27)
    g, g_tmp = _fields(f"g({stencil.Q}), g_tmp({stencil.Q})", domain)
    u = _fields(f"u({stencil.D})", domain)
    C = _fields("C", domain)

    density = params.symbolic_density_light + C.center * (params.symbolic_density_heavy - params.symbolic_density_light)
    body_force = [0, params.symbolic_gravitational_acceleration * density, 0]
    lbm_config = LBMConfig(
        stencil=stencil,
        method=Method.MRT,
        weighted=True,
        relaxation_rate=params.omega(C),
        compressible=False,
        force=sp.symbols(f"F_:{stencil.D}"),
        output={"velocity": u},
        kernel_type="collide_stream_push",
    )
    update_rule = create_lb_update_rule(
        lbm_config=lbm_config,
        lbm_optimisation=LBMOptimisation(symbolic_field=g, symbolic_temporary_field=g_tmp),
    )
    force = hydrodynamic_force_assignments(u, C, update_rule.method, params, body_force)
    update_rule = add_hydrodynamic_force(update_rule, force, C, g, params, lbm_config)
    update_rule = update_rule.new_with_substitutions(params.parameter_map())
    return ps.create_kernel(update_rule, _gpu_config(config, "allen_cahn_hydro"))
