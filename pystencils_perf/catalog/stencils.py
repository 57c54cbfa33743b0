"""Finite-difference stencils on fixed-size double-precision fields."""

from __future__ import annotations

import itertools

import pystencils as ps
import sympy as sp


def _config(config, name, target=ps.Target.CUDA):
    """A copy of `config` named `name`, for `target` (None: the configuration's own, or the device's later)."""
    cfg = ps.CreateKernelConfig() if config is None else config.copy()
    if target is not None:
        cfg.target = target
    if config is None or not config.get_option("function_name") or config.function_name == "kernel":
        cfg.function_name = name
    return cfg


def jacobi_2d(domain=(64, 64), *, config=None):
    """The 2D 5-point Jacobi sweep ``dst = (W + E + S + N) / 4``: 4 loads, 1 store."""
    nx, ny = domain
    src, dst = ps.fields(f"src, dst: double[{ny + 2}, {nx + 2}]")
    update = ps.Assignment(dst[0, 0], (src[0, 1] + src[0, -1] + src[1, 0] + src[-1, 0]) / 4)
    return ps.create_kernel([update], _config(config, "jacobi_2d"))


def star_3d(radius=4, domain=(640, 512, 512), *, config=None, coefficient=0.25):
    """The 3D star stencil of `radius` (6*radius + 1 points), the paper's 3D25pt for radius 4.

    ``dst[0,0,0] = coefficient * (sum of all src points)``; the arrays carry
    `radius` ghost layers on every side.
    """
    return ps.create_kernel(star_3d_assignments(radius, domain, coefficient), _config(config, f"star3d_r{radius}"))


def box_3d_assignments(domain=(512, 384, 256), dtype="float"):
    """The 27-point box stencil of radius 1, ``dst = mean of the 3x3x3 neighbourhood of src``, one ghost layer."""
    nx, ny, nz = domain
    src, dst = ps.fields(f"src, dst: {dtype}[{nz + 2}, {ny + 2}, {nx + 2}]")
    total = sp.Add(*(src[o] for o in itertools.product((-1, 0, 1), repeat=3)))
    return [ps.Assignment(dst[0, 0, 0], total / 27)]


def star_3d_recipe(radius=4, domain=(640, 512, 512), *, config=None, coefficient=0.25):
    """`star_3d` as assignments and configuration: `rank` compiles every fold of it for its registers.

    The configuration names no target unless `config` does: each fold is then generated for the device it
    is ranked for (HIP for an AMD GPU, CUDA for an NVIDIA one).
    """
    from ..adapters.pystencils import ApplyOptions

    name = f"star3d_r{radius}"
    return ApplyOptions(star_3d_assignments(radius, domain, coefficient), _config(config, name, target=None))


def star_3d_assignments(radius=4, domain=(640, 512, 512), coefficient=0.25):
    """The assignments of `star_3d`, for generators that configure the kernel themselves."""
    nx, ny, nz = domain
    g = radius
    src, dst = ps.fields(f"src, dst: double[{nz + 2 * g}, {ny + 2 * g}, {nx + 2 * g}]")
    offsets = [(0, 0, 0)]
    for r in range(1, radius + 1):
        for axis in range(3):
            for sign in (-1, 1):
                off = [0, 0, 0]
                off[axis] = sign * r
                offsets.append(tuple(off))
    total = sp.Add(*(src[o] for o in offsets))
    return [ps.Assignment(dst[0, 0, 0], coefficient * total)]
