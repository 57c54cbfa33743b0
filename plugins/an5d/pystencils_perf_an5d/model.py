"""AN5D's performance model (Matsumura et al., CGO'20, sec. 5) with the authors' thread bookkeeping.

A roofline over compute, global and shared memory for b_T fused time steps, divided
by the SM-wave efficiency. The paper describes the thread classes only in prose; the
counts here follow the formulas of the authors' spreadsheets (github.com/khaki3/
AN5D-Artifact, Model_V100.xlsm / Model_P100.xlsm, commit ed5a9c0, sheet "Formula" and
VBA `ZeroTobT`), written up as A1-A25 in SEED_MODELS.md sec. 4.

``paper_exact=True`` reproduces Table 5 and keeps the artifact's two quirks: the
stream-overlap planes lack the radius factor (A18) and the SM efficiency is
floor(x)/ceil(x) (A11), with the FP peak from the boost clock. ``paper_exact=False``
restores the radius, uses x/ceil(x) and Table 4's peaks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pystencils_perf.devices import Device

from .devices import get_an5d_device, parameters_of
from .errors import An5dParameterError
from .stencil import Problem

#: CUDA's limit on threads per block.
MAX_THREADS_PER_BLOCK = 1024
BOTTLENECKS = ("compute", "global", "shared")


@dataclass(frozen=True)
class Config:
    """AN5D's parameters: b_T fused time steps, spatial block b_S (threads per blocked dimension,
    fastest first), stream-block length h_SN along the streamed (slowest) dimension."""

    b_t: int
    b_s: tuple[int, ...]
    h_sn: int

    @property
    def threads_per_block(self) -> int:
        """A1: n_thr."""
        return math.prod(self.b_s)

    def label(self) -> str:
        return f"bT={self.b_t} bS={'x'.join(map(str, self.b_s))} hSN={self.h_sn}"


@dataclass(frozen=True)
class ThreadCounts:
    """Threads of one whole run's kernel call by class (A18-A23); per call, not yet times K."""

    total: int  # R: every thread at T = 0
    boundary: int  # S
    out_of_bound_first: int  # T0: out-of-bound at T = 0
    out_of_bound_last: int  # U: out-of-bound at T = b_T
    global_reads: int  # V
    global_writes: int  # W
    computing_last: int  # X: threads that compute at T = b_T
    shared_writes: int
    shared_reads: int  # = computations (A23)


@dataclass(frozen=True)
class Prediction:
    """AN5D's prediction of a configuration: GFLOP/s (Table 3 FLOP/cell), the bottleneck and its parts."""

    config: Config
    gflops: float
    bottleneck: str
    seconds: float
    seconds_by_resource: dict[str, float]
    sm_efficiency: float
    alu_efficiency: float
    threads: ThreadCounts


def kernel_calls(problem: Problem, config: Config) -> int:
    """A16, as the artifact counts: ceil(I_T / b_T) full calls."""
    return -(-problem.iterations // config.b_t)


def config_error(problem: Problem, config: Config) -> str | None:
    """Why AN5D cannot run `config` on `problem`, naming the parameter; None if it can."""
    stencil = problem.stencil
    for name, value in (("b_T", config.b_t), ("h_SN", config.h_sn)):
        if not isinstance(value, int) or value < 1:
            return f"{name} = {value!r}: must be a positive integer"
    if len(config.b_s) != stencil.dims - 1 or any(not isinstance(b, int) or b < 1 for b in config.b_s):
        return f"b_S = {config.b_s!r}: a {stencil.dims}D stencil needs {stencil.dims - 1} positive block size(s)"
    if config.threads_per_block > MAX_THREADS_PER_BLOCK:
        return f"b_S = {config.b_s}: {config.threads_per_block} threads exceed {MAX_THREADS_PER_BLOCK} per block"
    halo = 2 * stencil.radius * config.b_t
    for b in config.b_s:
        if b - halo <= 0:
            return (
                f"b_S = {b} leaves no compute region for b_T = {config.b_t} at radius {stencil.radius}: "
                f"b_S - 2*b_T*rad = {b - halo}"
            )
    return None


def thread_counts(problem: Problem, config: Config, *, paper_exact: bool = True) -> ThreadCounts:
    """A18-A23: threads by class for one kernel call over the whole grid."""
    r, size, dims = problem.stencil.radius, problem.size, problem.stencil.dims
    extent = size + 2 * r  # E: domain plus boundary
    halo = r * config.b_t  # h
    compute_widths = [b - 2 * halo for b in config.b_s]  # cb_i
    block_counts = [-(-size // cb) for cb in compute_widths]  # bNum_i
    stream_blocks = -(-size // config.h_sn)  # slNum
    plane_threads = math.prod(n * b for n, b in zip(block_counts, config.b_s))
    stream_overlap = 2 * config.b_t * (stream_blocks - 1) * (1 if paper_exact else r)  # A18
    total = plane_threads * (extent + stream_overlap)  # A19
    boundary = _boundary_threads(r, size, extent, block_counts, stream_overlap)  # A20
    out_of_bound = _out_of_bound_threads(r, extent, halo, compute_widths, block_counts)  # A21
    out_of_bound_first = out_of_bound * (extent + stream_overlap)
    out_of_bound_last = out_of_bound * extent
    shared_writes, shared_reads = _shared_accesses(problem, config, block_counts, stream_blocks, plane_threads)
    return ThreadCounts(
        total=total,
        boundary=boundary,
        out_of_bound_first=out_of_bound_first,
        out_of_bound_last=out_of_bound_last,
        global_reads=total - out_of_bound_first,  # A22
        global_writes=size**dims,
        computing_last=total - boundary - out_of_bound_last,
        shared_writes=shared_writes,
        shared_reads=shared_reads,
    )


def _boundary_threads(r: int, size: int, extent: int, block_counts: list[int], stream_overlap: int) -> int:
    if len(block_counts) == 1:
        return extent**2 - size**2 + 2 * r * r * (block_counts[0] - 1) + 2 * r * stream_overlap
    n1, n2 = block_counts
    return extent**3 - size**3 + 2 * r * r * (2 * (n1 - 1) + 2 * (n2 - 1)) + (extent**2 - size**2) * stream_overlap


def _out_of_bound_threads(r: int, extent: int, halo: int, widths: list[int], block_counts: list[int]) -> int:
    """A21: out-of-bound threads in one cross-section of the blocked dimensions."""
    spans = [cb * n + 2 * halo for cb, n in zip(widths, block_counts)]
    if len(spans) == 1:
        return spans[0] - extent
    (cb1, cb2), (n1, n2) = widths, block_counts
    edge = 2 * r * (halo - r)
    return (
        spans[0] * spans[1]
        - extent**2
        + (n1 - 1) * (edge + 2 * r * (n2 * cb2 + 2 * halo - 2 * r))
        + (n2 - 1) * (edge + 2 * r * (n1 * cb1 + 2 * halo - 2 * r))
    )


def _shared_accesses(problem: Problem, config: Config, block_counts, stream_blocks: int, plane_threads: int):
    """A23 (VBA ZeroTobT): shared-memory writes and reads (= computations) summed over t = 1..b_T."""
    r, size = problem.stencil.radius, problem.size
    extent = size + 2 * r
    writes = reads = 0
    for t in range(1, config.b_t + 1):
        halo_t = r * t
        planes = extent + 2 * r * (config.b_t - t) * (stream_blocks - 1)
        widths = [b - 2 * halo_t for b in config.b_s]
        remainders = [max(0, b - (n * c + halo_t - size) - halo_t) for b, n, c in zip(config.b_s, block_counts, widths)]
        if len(widths) == 1:
            computing = (block_counts[0] - 1) * widths[0] + remainders[0]
        else:
            (n1, n2), (c1, c2), (right, bottom) = block_counts, widths, remainders
            computing = (n1 - 1) * (n2 - 1) * c1 * c2 + (n1 - 1) * c1 * bottom + (n2 - 1) * c2 * right + right * bottom
        writes += plane_threads * planes
        reads += computing * planes
    return writes, reads


def sm_efficiency(problem: Problem, config: Config, device: Device, *, paper_exact: bool = True) -> float:
    """A11: how well the thread blocks fill whole waves of n_SM * (2048 / n_thr) blocks."""
    stencil = problem.stencil
    halo = stencil.radius * config.b_t
    blocks = -(-problem.size // config.h_sn) * math.prod(-(-problem.size // (b - 2 * halo)) for b in config.b_s)
    waves = blocks / (device.sm_count * (device.max_threads_per_sm // config.threads_per_block))
    return (math.floor(waves) if paper_exact else waves) / math.ceil(waves)


def predict(problem: Problem, device: str | Device, config: Config, *, paper_exact: bool = True) -> Prediction:
    """GFLOP/s AN5D's model predicts for `config` (A12-A13, A24)."""
    device = get_an5d_device(device)
    parameters = parameters_of(device)
    reason = config_error(problem, config)
    if reason:
        raise An5dParameterError(reason)
    sm_eff = sm_efficiency(problem, config, device, paper_exact=paper_exact)
    if sm_eff == 0:
        raise An5dParameterError(
            f"{config.label()}: fewer thread blocks than one wave of {device.name}; "
            "the artifact's floor/ceil efficiency is 0 (use paper_exact=False for x/ceil(x))"
        )
    stencil, precision = problem.stencil, problem.precision
    threads = thread_counts(problem, config, paper_exact=paper_exact)
    calls = kernel_calls(problem, config)
    compute_flop = threads.shared_reads * stencil.ops.flops * calls
    global_bytes = (threads.global_reads + threads.global_writes) * problem.word_bytes * calls
    shared_bytes = (
        (threads.shared_reads * stencil.shared_reads_per_cell + threads.shared_writes) * problem.word_bytes * calls
    )
    peak_gflops = parameters.peak_gflops(device, precision, from_clock=paper_exact)
    seconds_by_resource = {
        "compute": compute_flop / (peak_gflops * 1e9 * stencil.ops.alu_efficiency),  # A9
        "global": global_bytes / (parameters.dram_gbs(precision) * 1e9),  # A10
        "shared": shared_bytes / (parameters.shared_gbs(precision) * 1e9),
    }
    bottleneck = max(BOTTLENECKS, key=seconds_by_resource.__getitem__)
    seconds = seconds_by_resource[bottleneck] / sm_eff  # A12
    gflops = problem.iterations * problem.cells * stencil.flops_per_cell / (seconds * 1e9)  # A13
    return Prediction(
        config, gflops, bottleneck, seconds, seconds_by_resource, sm_eff, stencil.ops.alu_efficiency, threads
    )
