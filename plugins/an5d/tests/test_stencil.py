"""Stencil descriptions derived from pystencils assignments, and their errors."""

import pystencils as ps
import pytest
import sympy as sp
from pystencils_perf.errors import PerfError

from pystencils_perf_an5d import (
    An5dParameterError,
    OpMix,
    Stencil,
    StencilShapeError,
    benchmark,
    op_mix,
    problem_from_assignments,
)

WEIGHTS = [0.5 + 0.01 * i for i in range(125)]  # distinct, so sympy keeps one product per load


def weighted_sum(src, offsets):
    return sum(w * src[o] for w, o in zip(WEIGHTS, offsets))


def star_offsets(dims, radius):
    offsets = [(0,) * dims]
    for axis in range(dims):
        for d in range(1, radius + 1):
            for sign in (-1, 1):
                offsets.append(tuple(sign * d if a == axis else 0 for a in range(dims)))
    return offsets


def box_offsets(dims, radius):
    import itertools

    return list(itertools.product(range(-radius, radius + 1), repeat=dims))


@pytest.mark.parametrize(
    "dims, radius, shape, dtype, paper_name",
    [
        (2, 1, "star", "float32", "star2d1r"),
        (3, 2, "star", "float64", "star3d2r"),
        (2, 2, "box", "float32", "box2d2r"),
        (3, 1, "box", "float64", "box3d1r"),
    ],
)
def test_weighted_stencils_match_the_paper_benchmarks(dims, radius, shape, dtype, paper_name):
    size = 64
    src, dst = ps.fields(f"src, dst: {dtype}[{','.join([str(size + 2 * radius)] * dims)}]")
    offsets = star_offsets(dims, radius) if shape == "star" else box_offsets(dims, radius)
    problem = problem_from_assignments([ps.Assignment(dst[(0,) * dims], weighted_sum(src, offsets))])
    paper = benchmark(paper_name)
    assert (problem.stencil.shape, problem.stencil.radius, problem.stencil.dims) == (shape, radius, dims)
    assert problem.stencil.ops == paper.ops
    assert problem.stencil.flops_per_cell == paper.flops_per_cell
    assert problem.precision == ("float" if dtype == "float32" else "double")
    assert problem.size == size


def test_subexpressions_are_substituted():
    src, dst = ps.fields("src, dst: float64[34, 34]")
    s = sp.Symbol("s")
    assignments = [ps.Assignment(s, src[1, 0] + src[-1, 0]), ps.Assignment(dst[0, 0], 0.25 * s + 0.5 * src[0, 1])]
    problem = problem_from_assignments(assignments)
    assert (problem.stencil.shape, problem.stencil.radius) == ("star", 1)
    assert problem.stencil.ops.flops == 5


@pytest.mark.parametrize(
    "expr, ops",
    [
        ("a*b + c*d + e", OpMix(fma=2, add=0, mul=0)),
        ("a + b + c", OpMix(fma=0, add=2, mul=0)),
        ("a/b", OpMix(fma=0, add=0, mul=1, other=1)),
        ("a - b*c", OpMix(fma=1, add=0, mul=0)),
        ("sqrt(a) + b**2", OpMix(fma=1, add=0, mul=0, other=1)),
        ("2*a*b", OpMix(fma=0, add=0, mul=2)),
    ],
)
def test_op_mix_contracts_products_into_fmas(expr, ops):
    assert op_mix(sp.sympify(expr)) == ops


def test_partial_box_is_neither_star_nor_box():
    src, dst = ps.fields("src, dst: float32[34, 34]")
    with pytest.raises(StencilShapeError, match="diagonal ones but not the full 3\\^2 box"):
        problem_from_assignments([ps.Assignment(dst[0, 0], src[1, 1] + src[0, 0] + src[-1, 0])])


def test_radius_zero():
    src, dst = ps.fields("src, dst: float32[34, 34]")
    with pytest.raises(StencilShapeError, match="radius 0"):
        problem_from_assignments([ps.Assignment(dst[0, 0], 2 * src[0, 0])])


def test_two_stores():
    src, dst, out = ps.fields("src, dst, out: float32[34, 34]")
    with pytest.raises(StencilShapeError, match="found 2 field stores"):
        problem_from_assignments([ps.Assignment(dst[0, 0], src[1, 0]), ps.Assignment(out[0, 0], src[-1, 0])])


def test_unequal_sizes_and_integer_fields():
    src, dst = ps.fields("src, dst: float32[34, 66]")
    with pytest.raises(An5dParameterError, match="interior sizes \\[32, 64\\]"):
        problem_from_assignments([ps.Assignment(dst[0, 0], src[1, 0] + src[0, 1])])
    assert problem_from_assignments([ps.Assignment(dst[0, 0], src[1, 0] + src[0, 1])], size=32).size == 32
    isrc, idst = ps.fields("isrc, idst: int32[34, 34]")
    with pytest.raises(An5dParameterError, match="AN5D models float32 and float64"):
        problem_from_assignments([ps.Assignment(idst[0, 0], isrc[1, 0] + isrc[0, 1])])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"shape": "diamond", "radius": 1, "dims": 2}, "neither 'star' nor 'box'"),
        ({"shape": "star", "radius": 0, "dims": 2}, "radius 0"),
        ({"shape": "box", "radius": 1, "dims": 1}, "1 dimensions"),
    ],
)
def test_stencil_validation(kwargs, message):
    with pytest.raises(StencilShapeError, match=message) as info:
        Stencil(name="s", flops_per_cell=1, ops=OpMix(1, 0, 0), **kwargs)
    assert isinstance(info.value, PerfError)


def test_symbolic_offsets_and_non_assignments():
    src, dst = ps.fields("src, dst: float32[34, 34]")
    with pytest.raises(StencilShapeError, match="non-constant offsets"):
        problem_from_assignments([ps.Assignment(dst[0, 0], src[sp.Symbol("k"), 0] + src[1, 0])])
    with pytest.raises(StencilShapeError, match="pass a list of ps.Assignment"):
        problem_from_assignments(["dst = src"])
