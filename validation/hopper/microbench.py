"""Memory figures of this machine's GPU for its device file: DRAM and L2 bandwidth, L2 request rates, latencies.

The DRAM rates by the length of the contiguous runs the data come in (`dram_run_rates`), and by the number of
fields a kernel streams at once, on 128-B lines or one double off them (`field_count_rates`), by its warps per SM
(`partly_stored_line_rates`) and by the width of its blocks (`partly_stored_line_widths`; reads of x-neighbours by
the same widths: `neighbour_read_widths`). The L2's rates for 8-B loads, stores and copies (`l2_mix_rates`). The
request rates:
loads and stores by stride (how many requests and sectors L2 serves per second), and the
rate of one-sector loads by the number in flight per SM (`in_flight_rates`: where the round time grows beyond
the unloaded latency, the SM holds no more).

Our own kernels (cupy RawKernel), written after the methods gpu-benches describes (stream scale,
a read-only loop over an L2-sized buffer, one thread chasing a random permutation); none of
its code is used. Times are CUDA-event medians after warm-up; every input is random, never zeros.

    python3 validation/hopper/microbench.py [--json FILE] [--only FIGURE ...]
"""

from __future__ import annotations

import argparse
import json
import statistics

import cupy as cp
import numpy as np

from pystencils_perf.tempcache import use_temporary_pystencils_cache

use_temporary_pystencils_cache("pystencils-perf-")  # before pystencils is imported: never the home directory

from pystencils_perf.adapters.pystencils.gpu import time_launches  # noqa: E402

SOURCE = r"""
extern "C" __global__ void scale(const double* __restrict__ a, double* __restrict__ b, double s, long n) {
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x)
        b[i] = s * a[i];
}
// every thread sums its grid-stride share of a buffer `passes` times; the sum is stored only if it is
// negative (never: the data are positive), so the compiler keeps the loads and nothing is written
extern "C" __global__ void read_passes(const double2* __restrict__ a, double* out, long n, int passes) {
    double sum0 = 0.0, sum1 = 0.0;  // 16-B loads, two chains: the loads, not the adds, set the pace
    for (int p = 0; p < passes; ++p)
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < n; i += (long)gridDim.x * blockDim.x) {
            double2 v = __ldcg(a + i);
            sum0 += v.x;
            sum1 += v.y;
        }
    if (sum0 + sum1 < 0.0) out[0] = sum0 + sum1;
}
// every thread loads one double every `stride` doubles of an L2-resident buffer, `passes` times: a stride of
// 16 or more puts each lane in a line of its own, so each load is one 32-B sector in one L2 request
extern "C" __global__ void read_strided(const double* __restrict__ a, double* out, long count, long stride, int passes) {
    double sum = 0.0;
    for (int p = 0; p < passes; ++p)
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x)
            sum += __ldcg(a + i * stride);
    if (sum < 0.0) out[0] = sum;
}
// as read_strided, but stores (8 B, or 16 B with `wide`) through inline PTX, so that no pass's stores are
// dropped as overwritten by the next pass's
extern "C" __global__ void write_strided(double* a, long count, long stride, int passes, int wide) {
    for (int p = 0; p < passes; ++p)
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
            double v = p + 0.5;
            if (wide)
                asm volatile("st.global.v2.f64 [%0], {%1, %1};" :: "l"(a + i * stride), "d"(v) : "memory");
            else
                asm volatile("st.global.f64 [%0], %1;" :: "l"(a + i * stride), "d"(v) : "memory");
        }
}
// a strided copy: each lane loads one double and stores it elsewhere, one load and one store request each
extern "C" __global__ void copy_strided(const double* __restrict__ a, double* b, long count, long stride, int passes) {
    for (int p = 0; p < passes; ++p)
        for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < count; i += (long)gridDim.x * blockDim.x) {
            double v = __ldcg(a + i * stride) + p;
            asm volatile("st.global.f64 [%0], %1;" :: "l"(b + i * stride), "d"(v) : "memory");
        }
}
// the 4-KiB row of a buffer that run `run` starts at: a multiplicative hash, so that runs land at pseudo-random rows
__device__ __forceinline__ unsigned long long random_row(unsigned long long run, unsigned long long row_mask) {
    return ((run + 1) * 0x9E3779B97F4A7C15ull >> 21) & row_mask;
}
// reads `runs` runs of `run_doubles` consecutive doubles, each at the start of a pseudo-random 4-KiB row of a
// buffer far larger than L2: what DRAM delivers when the data come in short contiguous runs
extern "C" __global__ void read_runs(const double* __restrict__ a, double* out, long runs, int run_doubles,
                                     unsigned long long row_mask) {
    double sum = 0.0;
    long lanes = runs * run_doubles;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < lanes; i += (long)gridDim.x * blockDim.x) {
        sum += __ldcg(a + random_row(i / run_doubles, row_mask) * 512 + i % run_doubles);
    }
    if (sum < 0.0) out[0] = sum;
}
// writes `runs` runs of `run_doubles` consecutive doubles at pseudo-random 4-KiB rows, as read_runs reads them: what
// DRAM takes when written data leave L2 in short runs (a narrow block's rows of a field it stores)
extern "C" __global__ void write_runs(double* a, long runs, int run_doubles, unsigned long long row_mask, double v) {
    long lanes = runs * run_doubles;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < lanes; i += (long)gridDim.x * blockDim.x) {
        a[random_row(i / run_doubles, row_mask) * 512 + i % run_doubles] = v + i;
    }
}
// reads each run as read_runs does and writes it to the same place of another buffer: a streaming kernel's
// reads and writes in short runs
extern "C" __global__ void copy_runs(const double* __restrict__ a, double* b, long runs, int run_doubles,
                                     unsigned long long row_mask) {
    long lanes = runs * run_doubles;
    for (long i = blockIdx.x * (long)blockDim.x + threadIdx.x; i < lanes; i += (long)gridDim.x * blockDim.x) {
        unsigned long long at = random_row(i / run_doubles, row_mask) * 512 + i % run_doubles;
        b[at] = __ldcg(a + at) + 1.0;
    }
}
// block b reads part (97 b mod blocks) / readers of a buffer `passes` times (16-B loads past L1): with one reader
// each block has a part of its own, as gpu-benches' gpu-l2-cache reads; with two, each part is read by two blocks
// far apart in the launch (97 is prime to the block counts used), so on SMs that may lie on either L2 partition,
// as neighbouring stencil blocks share their halos
extern "C" __global__ void read_parts(const double2* __restrict__ a, double* out, long part_len, int readers,
                                      int passes) {
    const double2* part = a + ((blockIdx.x * 97u) % gridDim.x / readers) * part_len;
    double sum0 = 0.0, sum1 = 0.0;
    for (int p = 0; p < passes; ++p)
        for (long i = threadIdx.x; i < part_len; i += blockDim.x) {
            double2 v = __ldcg(part + i);
            sum0 += v.x;
            sum1 += v.y;
        }
    if (sum0 + sum1 < 0.0) out[0] = sum0 + sum1;
}
// block b's own part (`part_len` doubles, a multiple of 8 x blockDim): 8-B loads past L1 (`mode` 0), 8-B stores (1),
// or each load's value stored to the same place of a second buffer (2, a copy within L2), `passes` times, each lane
// with eight loads in flight: what a stencil's mix of L1 misses and stores asks of L2, apart from its requests' sizes
extern "C" __global__ void l2_mix(const double* __restrict__ a, double* b, double* out, long part_len, int passes,
                                  int mode) {
    const long base = blockIdx.x * part_len;
    double sum = 0.0;
    for (int p = 0; p < passes; ++p)
        for (long i = threadIdx.x; i < part_len; i += 8 * blockDim.x) {
            double v[8];
#pragma unroll
            for (int k = 0; k < 8; ++k) v[k] = mode == 1 ? p + 0.5 : __ldcg(a + base + i + k * blockDim.x) + p;
#pragma unroll
            for (int k = 0; k < 8; ++k) {
                if (mode == 0)
                    sum += v[k];
                else  // inline PTX, so that no pass's stores are dropped as overwritten by the next pass's
                    asm volatile("st.global.cg.f64 [%0], %1;" :: "l"(b + base + i + k * blockDim.x), "d"(v[k]) : "memory");
            }
        }
    if (sum < 0.0) out[0] = sum;
}
// one thread follows next[] from out[0] for `steps` steps through L2 (__ldcg skips L1); clock64 cycles per
// step. Each launch goes on where the last stopped, so a buffer larger than L2 is never re-read warm.
extern "C" __global__ void chase(const long long* __restrict__ next, long steps, long long* out) {
    long long j = out[0];
    long long t0 = clock64();
    for (long s = 0; s < steps; ++s) j = __ldcg(next + j);
    long long t1 = clock64();
    out[0] = j;
    out[1] = t1 - t0;
}
"""
#: `IN_FLIGHT_LOADS` one-sector loads per lane in a round, from random 128-B lines of a buffer; the next round's
#: addresses wait for this round's values, so each warp has that many loads per lane in flight at a time
IN_FLIGHT_SOURCE = r"""
extern "C" __global__ void in_flight_{k}(const double* __restrict__ a, double* out, unsigned long long line_mask,
                                        int rounds) {{
    unsigned long long x = (blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x + 1) * 0x9E3779B97F4A7C15ull;
    double sum = 0.0;
    for (int r = 0; r < rounds; ++r) {{
        double v[{k}];
#pragma unroll
        for (int j = 0; j < {k}; ++j) {{
            x = x * 6364136223846793005ull + 1442695040888963407ull;
            v[j] = __ldcg(a + ((x >> 17) & line_mask) * 16);
        }}
        double s = 0.0;
#pragma unroll
        for (int j = 0; j < {k}; ++j) s += v[j];
        sum += s;
        x += (s < 0.0);  // never true (the data are positive), but the compiler cannot know
    }}
    if (sum < 0.0) out[0] = sum;
}}
"""
IN_FLIGHT_LOADS = (1, 4, 16)
#: a pystencils kernel of `{s}` fields as it is compiled: each thread loads its cell of every field first (all in
#: flight at once), then stores them; field f lies at f * stride doubles of each buffer, and `load_shift` and
#: `store_shift` doubles move the loads or stores off the 128-B lines (a ghost layer, a pulled neighbour).
#: ``read_fields`` loads the fields and stores their sum to one.
FIELDS_SOURCE = r"""
extern "C" __global__ void copy_fields_{s}(const double* __restrict__ a, double* __restrict__ b, long n, long stride,
                                           int load_shift, int store_shift) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double v[{s}];
#pragma unroll
    for (int f = 0; f < {s}; ++f) v[f] = a[f * stride + i + load_shift];
#pragma unroll
    for (int f = 0; f < {s}; ++f) b[f * stride + i + store_shift] = v[f] + 1.0;
}}
extern "C" __global__ void read_fields_{s}(const double* __restrict__ a, double* __restrict__ b, long n, long stride,
                                           int load_shift, int store_shift) {{
    long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    double sum = 0.0;
#pragma unroll
    for (int f = 0; f < {s}; ++f) sum += a[f * stride + i + load_shift];
    b[i + store_shift] = sum;
}}
"""
FIELD_COUNTS = (1, 2, 4, 7, 13, 19, 27)
#: `copy_fields` over rows of `pitch` doubles in 2D blocks: a warp stores 32 cells of one row, and the lines a warp
#: store writes in part are completed by a warp of the same block or, at the block's edge, of the next block
FIELDS_2D_SOURCE = r"""
extern "C" __global__ void copy_fields_2d_{s}(const double* __restrict__ a, double* __restrict__ b, long stride,
                                              long pitch, int store_shift) {{
    long i = (blockIdx.y * (long)blockDim.y + threadIdx.y) * pitch + blockIdx.x * (long)blockDim.x + threadIdx.x;
    double v[{s}];
#pragma unroll
    for (int f = 0; f < {s}; ++f) v[f] = a[f * stride + i];
#pragma unroll
    for (int f = 0; f < {s}; ++f) b[f * stride + i + store_shift] = v[f] + 1.0;
}}
"""
#: the load side of the same question: each thread sums its cell and its neighbours in every field (``neighbours``
#: 0: its own cell only, on the lines; 1: x - 1, x and x + 1 of a row one double off the lines, as a ghost layer puts
#: it; 2: y - 1, y and y + 1) and stores the sum on the lines. A warp's x-neighbours reach one line past its own,
#: which a warp of the same block fetches at about the same time or, at the block's edge, a warp of another SM; its
#: y-neighbours are rows that the warps above and below it fetch: in the same block in tall blocks, in other blocks
#: (earlier, or on another SM) in wide ones
NEIGHBOURS_2D_SOURCE = r"""
extern "C" __global__ void read_neighbours_2d_{s}(const double* __restrict__ a, double* __restrict__ b, long stride,
                                                  long pitch, int neighbours) {{
    long out = (blockIdx.y * (long)blockDim.y + threadIdx.y) * pitch + blockIdx.x * (long)blockDim.x + threadIdx.x;
    long step = neighbours == 1 ? 1 : pitch;
    long i = out + (neighbours ? step : 0);
    double sum = 0.0;
#pragma unroll
    for (int f = 0; f < {s}; ++f) {{
        sum += a[f * stride + i];
        if (neighbours) sum += a[f * stride + i - step] + a[f * stride + i + step];
    }}
    b[out] = sum;
}}
"""
WIDTH_FIELD_COUNTS = (1, 4, 19)
#: (block width, block height): 256 threads in blocks 32 to 256 wide, and 1024 threads 32 and 1024 wide
WIDTH_BLOCKS = ((32, 8), (64, 4), (128, 2), (256, 1), (32, 32), (1024, 1))
#: the rows of the width figures are a multiple of this, so that every block of `WIDTH_BLOCKS` tiles them
WIDTH_ROWS_MULTIPLE = max(height for _, height in WIDTH_BLOCKS)
MODULE = cp.RawModule(
    code=SOURCE
    + "".join(IN_FLIGHT_SOURCE.format(k=k) for k in IN_FLIGHT_LOADS)
    + "".join(FIELDS_SOURCE.format(s=s) for s in FIELD_COUNTS)
    + "".join(FIELDS_2D_SOURCE.format(s=s) + NEIGHBOURS_2D_SOURCE.format(s=s) for s in WIDTH_FIELD_COUNTS)
)
SLOT_BYTES = 128  # one chased element per 128-B line: no two steps share a line


def median_ms(run, warmup: int = 3, repeats: int = 15) -> float:
    """Median CUDA-event time of `run`, timed as `measure` times its candidates."""
    return statistics.median(time_launches(cp, run, warmup, repeats))


def launch_grid() -> int:
    return 4 * cp.cuda.Device().attributes["MultiProcessorCount"]


def grid_stride_seconds(kernel_name: str, *args) -> float:
    """Median seconds of a launch of the grid-stride kernel `kernel_name` (8 blocks of 256 threads per
    `launch_grid` unit) with `args`."""
    kernel = MODULE.get_function(kernel_name)
    return median_ms(lambda: kernel((launch_grid() * 8,), (256,), args)) * 1e-3


def dram_scale_gbs(n: int = 1 << 28) -> float:
    """Stream scale b = s * a on two 2-GiB arrays: bytes read plus written per second."""
    a = cp.random.random(n) + 0.5
    b = cp.empty_like(a)
    seconds = grid_stride_seconds("scale", a, b, np.float64(1.5), np.int64(n))
    assert bool(cp.allclose(b[:1000], 1.5 * a[:1000]))
    return 2 * n * 8 / seconds / 1e9


def l2_read_gbs(buffer_bytes: int = 16 << 20, passes: int = 64) -> float:
    """Loads per second from a 16-MiB buffer that stays in L2, read 64 times per launch."""
    n = buffer_bytes // 16
    a = cp.random.random(2 * n) + 0.5
    seconds = grid_stride_seconds("read_passes", a, cp.zeros(1), np.int64(n), np.int32(passes))
    return passes * n * 16 / seconds / 1e9


def l2_request_rates(buffer_bytes: int = 16 << 20) -> dict[str, dict[str, float]]:
    """L2 loads, requests and sectors per second by the stride of 8-B loads (one warp load: 32 lanes)."""
    a = cp.random.random(buffer_bytes // 8) + 0.5
    out = cp.zeros(1)
    rates = {}
    for stride in (1, 2, 4, 8, 16, 32):
        count = buffer_bytes // 8 // stride
        lanes_per_line = max(1, 16 // stride)  # 128-B lines
        lanes_per_sector = max(1, 4 // stride)  # 32-B sectors
        passes = max(1, int(4e8 / count))
        loads = (
            passes
            * count
            / grid_stride_seconds("read_strided", a, out, np.int64(count), np.int64(stride), np.int32(passes))
        )
        rates[f"stride_{8 * stride}B"] = {
            "loads_per_s": loads,
            "requests_per_s": loads / lanes_per_line,
            "sectors_per_s": loads / lanes_per_sector,
            "sector_bytes_per_s": 32 * loads / lanes_per_sector,
        }
    return rates


def l2_store_rates(buffer_bytes: int = 16 << 20) -> dict[str, dict[str, float]]:
    """L2 store requests per second by the stride of 8-B (and 16-B) stores, and of a strided copy (a load and a
    store request per lane): what a store request costs the L2 next to a load request."""
    a = cp.random.random(buffer_bytes // 8) + 0.5
    b = cp.random.random(buffer_bytes // 8) + 0.5
    rates = {}
    for name, stride, wide in (
        ("stride_8B", 1, 0),
        ("stride_32B", 4, 0),
        ("stride_128B", 16, 0),
        ("stride_256B", 32, 0),
        ("16B_stride_128B", 16, 1),
        ("16B_stride_256B", 32, 1),
    ):
        count = buffer_bytes // 8 // stride
        passes = max(1, int(4e8 / count))
        stores = (
            passes
            * count
            / grid_stride_seconds(
                "write_strided", a, np.int64(count), np.int64(stride), np.int32(passes), np.int32(wide)
            )
        )
        lanes_per_line = max(1, 16 // stride)
        rates[name] = {"stores_per_s": stores, "requests_per_s": stores / lanes_per_line}
    for name, stride in (("copy_stride_128B", 16), ("copy_stride_256B", 32)):
        count = buffer_bytes // 8 // stride
        passes = max(1, int(2e8 / count))
        lanes = (
            passes
            * count
            / grid_stride_seconds("copy_strided", a, b, np.int64(count), np.int64(stride), np.int32(passes))
        )
        rates[name] = {"lanes_per_s": lanes, "requests_per_s": 2 * lanes}
    return rates


RUN_BYTES = (32, 64, 128, 256, 512, 1024, 4096)


def dram_run_rates(buffer_bytes: int = 2 << 30) -> dict[str, dict[str, float]]:
    """Bytes and runs per second from DRAM when the data come in runs of 32 B to 4 KiB at random rows: read
    (``run_*``), written (``write_run_*``), and read then written to another buffer (``copy_run_*``, whose bytes
    count both)."""
    rows = buffer_bytes // 4096
    a = cp.random.random(buffer_bytes // 8) + 0.5
    b = cp.random.random(buffer_bytes // 8) + 0.5
    out = cp.zeros(1)
    rates = {}
    for run_bytes in RUN_BYTES:
        runs = (1 << 28) // run_bytes
        shape = (np.int64(runs), np.int32(run_bytes // 8), np.uint64(rows - 1))
        for name, kernel, args, moved in (
            ("run", "read_runs", (a, out, *shape), 1),
            ("write_run", "write_runs", (b, *shape, np.float64(0.5)), 1),
            ("copy_run", "copy_runs", (a, b, *shape), 2),
        ):
            runs_per_s = runs / grid_stride_seconds(kernel, *args)
            rates[f"{name}_{run_bytes}B"] = {"bytes_per_s": moved * runs_per_s * run_bytes, "runs_per_s": runs_per_s}
    return rates


def in_flight_rates(buffer_bytes: int, rounds: int) -> dict[str, dict[str, float]]:
    """One-sector loads per second and SM, and the time of a round, by the loads each SM has in flight: one
    block of `warps` warps per SM, each lane with k loads of random lines of `buffer_bytes` per round."""
    lines = buffer_bytes // 128
    a = cp.random.random(lines * 16) + 0.5
    out = cp.zeros(1)
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    rates = {}
    for k in IN_FLIGHT_LOADS:
        kernel = MODULE.get_function(f"in_flight_{k}")
        for warps in (1, 2, 4, 8, 16, 32):
            ms = median_ms(lambda: kernel((sms,), (32 * warps,), (a, out, np.uint64(lines - 1), np.int32(rounds))))
            loads = sms * 32 * warps * k * rounds
            rates[f"k{k}_warps{warps}"] = {
                "in_flight_per_sm": 32 * warps * k,
                "loads_per_s_per_sm": loads / sms / (ms * 1e-3),
                "ns_per_round": ms * 1e6 / rounds,
            }
    return rates


def chase_latency(buffer_bytes: int, steps: int, seed: int) -> dict[str, float]:
    """Cycles (clock64) and ns per dependent load over a random cyclic permutation of `buffer_bytes`."""
    slots = buffer_bytes // SLOT_BYTES
    stride = SLOT_BYTES // 8
    order = np.random.default_rng(seed).permutation(slots)
    nxt = np.zeros(slots * stride, dtype=np.int64)
    nxt[order * stride] = np.roll(order, -1) * stride
    next_gpu = cp.asarray(nxt)
    out = cp.zeros(2, dtype=cp.int64)
    kernel = MODULE.get_function("chase")
    cycles = []

    def run():
        kernel((1,), (1,), (next_gpu, np.int64(steps), out))  # on from where the last launch stopped
        cycles.append(out[1].copy())

    ms = median_ms(run, warmup=1, repeats=5)  # the warm-up launch warms the TLB (and a small buffer's L2)
    return {
        "cycles": statistics.median(int(c.get()) for c in cycles[1:]) / steps,
        "ns": ms * 1e6 / steps,
        "slots": slots,
        "steps_per_launch": steps,
    }


def field_layout(buffer_bytes: int, fields: int) -> tuple[int, int]:
    """Cells per field (a multiple of the 256-thread blocks) and the field stride in doubles for `fields` fields in a
    buffer of `buffer_bytes`: 768 B past a multiple of 2 KiB, so that the fields do not all start at one offset of a
    DRAM row."""
    n = (buffer_bytes // 8 // fields - 1024) // 256 * 256
    return n, n + 96


def field_count_rates(buffer_bytes: int = 1 << 30) -> dict[str, dict[str, float]]:
    """DRAM bytes per second of kernels that copy (``copy``) or read (``read``) 1 to 27 fields, one thread per cell
    and 256 per block, with loads and stores on 128-B lines or one double off them (``shift_LS``: load shift L,
    store shift S): whether what DRAM delivers depends on how many fields a kernel streams at once, and on
    partly written lines, apart from how many requests it makes. Each buffer holds `buffer_bytes` of fields."""
    a = cp.random.random(buffer_bytes // 8 + 1024) + 0.5
    b = cp.zeros_like(a)
    rates = {}
    for fields in FIELD_COUNTS:
        n, stride = field_layout(buffer_bytes, fields)
        for kind in ("copy", "read"):
            kernel = MODULE.get_function(f"{kind}_fields_{fields}")
            for load_shift, store_shift in ((0, 0), (1, 0), (0, 1), (1, 1)):
                args = (a, b, np.int64(n), np.int64(stride), np.int32(load_shift), np.int32(store_shift))
                b.fill(-1.0)  # poisoned: the check below sees every field's cells written
                ms = median_ms(lambda: kernel((n // 256,), (256,), args), repeats=9)
                if kind == "copy":
                    last = (fields - 1) * stride
                    assert bool(
                        cp.array_equal(
                            b[last + store_shift : last + store_shift + n],
                            a[last + load_shift : last + load_shift + n] + 1.0,
                        )
                    )
                moved = n * 8 * (2 * fields if kind == "copy" else fields + 1)
                rates[f"{kind}_{fields}_shift_{load_shift}{store_shift}"] = {
                    "fields": fields,
                    "bytes_per_s": moved / (ms * 1e-3),
                    "ms": ms,
                }
    return rates


def partly_stored_line_rates(buffer_bytes: int = 1 << 30) -> dict[str, dict[str, float]]:
    """`field_count_rates`' copies of 4 and 19 fields with stores on and one double off their lines, at 2, 4 and 8
    blocks of 256 per SM (16, 32 and 64 warps: dynamic shared memory that the kernel does not use keeps the
    others out): whether what a partly written line costs DRAM follows the warp stores in flight per SM (warps x
    fields) or the fields alone."""
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    shared_per_sm = cp.cuda.Device().attributes["MaxSharedMemoryPerMultiprocessor"]
    a = cp.random.random(buffer_bytes // 8 + 1024) + 0.5
    b = cp.zeros_like(a)
    rates = {}
    for fields in (4, 19):
        n, stride = field_layout(buffer_bytes, fields)
        kernel = MODULE.get_function(f"copy_fields_{fields}")
        for blocks_per_sm in (2, 4, 8):
            shared = shared_per_sm // blocks_per_sm - 2048  # the runtime reserves 1 KiB per block
            kernel.max_dynamic_shared_size_bytes = shared
            for store_shift in (0, 1):
                args = (a, b, np.int64(n), np.int64(stride), np.int32(0), np.int32(store_shift))
                ms = median_ms(lambda: kernel((n // 256,), (256,), args, shared_mem=shared), repeats=9)
                rates[f"copy_{fields}_warps_{8 * blocks_per_sm}_shift_0{store_shift}"] = {
                    "fields": fields,
                    "warps_per_sm": 8 * blocks_per_sm,
                    "sms": sms,
                    "bytes_per_s": n * 8 * 2 * fields / (ms * 1e-3),
                    "ms": ms,
                }
        kernel.max_dynamic_shared_size_bytes = 0
    return rates


def field_rows(buffer_bytes: int, fields: int, row_cells: int, spare_rows: int = 0) -> tuple[int, int, int]:
    """`field_layout`'s field stride for 2D rows of `row_cells` doubles, the row pitch (16 doubles more: a row starts
    on a line, and a store one double past its last cell does not reach the next row) and the rows per field, a
    multiple of `WIDTH_ROWS_MULTIPLE`, with `spare_rows` left over in the field."""
    _, stride = field_layout(buffer_bytes, fields)
    pitch = row_cells + 16
    return stride, pitch, ((stride - 1024) // pitch - spare_rows) // WIDTH_ROWS_MULTIPLE * WIDTH_ROWS_MULTIPLE


def partly_stored_line_widths(buffer_bytes: int = 1 << 30, row_cells: int = 4096) -> dict[str, dict[str, float]]:
    """Copies of 1, 4 and 19 fields of 2D rows (`row_cells` doubles each, 16 more between rows), one thread per
    cell, in the blocks of `WIDTH_BLOCKS`, with stores on and one double off their lines: whether a line that one
    warp store writes in part costs more where the warp that completes it belongs to another block (every warp
    edge in blocks 32 wide, one in eight in blocks 256 wide). The held-out Hopper sets run blocks 32 wide up to
    17 % slower than blocks 256 wide with the same volumes (validation/hopper/README.md, "Block width")."""
    a = cp.random.random(buffer_bytes // 8 + 1024) + 0.5
    b = cp.zeros_like(a)
    rates = {}
    for fields in WIDTH_FIELD_COUNTS:
        stride, pitch, rows = field_rows(buffer_bytes, fields, row_cells)
        kernel = MODULE.get_function(f"copy_fields_2d_{fields}")
        for width, height in WIDTH_BLOCKS:
            for store_shift in (0, 1):
                args = (a, b, np.int64(stride), np.int64(pitch), np.int32(store_shift))
                b.fill(-1.0)  # poisoned: the check below sees the last field's cells written
                grid = (row_cells // width, rows // height)
                ms = median_ms(lambda: kernel(grid, (width, height), args), repeats=9)
                last = (fields - 1) * stride + store_shift
                written = b[last : last + rows * pitch].reshape(rows, pitch)[:, :row_cells]
                assert bool(
                    cp.array_equal(
                        written,
                        a[last - store_shift : last - store_shift + rows * pitch].reshape(rows, pitch)[:, :row_cells]
                        + 1.0,
                    )
                )
                rates[f"copy_{fields}_block_{width}x{height}_shift_0{store_shift}"] = {
                    "fields": fields,
                    "block": [width, height],
                    "bytes_per_s": rows * row_cells * 8 * 2 * fields / (ms * 1e-3),
                    "ms": ms,
                }
    return rates


def neighbour_read_widths(buffer_bytes: int = 1 << 30, row_cells: int = 4096) -> dict[str, dict[str, float]]:
    """The load side of `partly_stored_line_widths`: kernels that read 1, 4 or 19 fields of 2D rows, each thread its
    own cell only (``neighbours`` 0), its x-neighbours too (1) or its y-neighbours too (2), and store one sum on the
    lines, in the blocks of `WIDTH_BLOCKS`; the blocks of 256 threads also at 16 warps per SM (dynamic shared memory
    that the kernel does not use keeps other blocks out), where the latency of a round of loads limits. If a line
    fetched for a warp at a block's edge costs more than one another warp of the block fetches, the x-neighbour reads
    slow down as blocks narrow; if a row that a warp of the same block is fetching costs more than one another block
    fetched, the y-neighbour reads slow down as blocks grow tall; the own-cell reads show what the width alone
    costs."""
    shared_per_sm = cp.cuda.Device().attributes["MaxSharedMemoryPerMultiprocessor"]
    a = cp.random.random(buffer_bytes // 8 + 1024) + 0.5
    b = cp.zeros(buffer_bytes // 8 // 4, dtype=a.dtype)
    rates = {}
    for fields in WIDTH_FIELD_COUNTS:
        stride, pitch, rows = field_rows(buffer_bytes, fields, row_cells, spare_rows=2)  # a row above and below
        rows = min(rows, b.size // pitch // WIDTH_ROWS_MULTIPLE * WIDTH_ROWS_MULTIPLE)  # the sums fit the output
        kernel = MODULE.get_function(f"read_neighbours_2d_{fields}")
        for width, height in WIDTH_BLOCKS:
            for warps_per_sm in (None, 16) if width * height == 256 else (None,):
                shared = 0 if warps_per_sm is None else shared_per_sm // (warps_per_sm // 8) - 2048
                kernel.max_dynamic_shared_size_bytes = shared
                for neighbours in (0, 1, 2):
                    args = (a, b, np.int64(stride), np.int64(pitch), np.int32(neighbours))
                    grid = (row_cells // width, rows // height)
                    b.fill(-1.0)  # poisoned: the check below sees the first row's sums written
                    ms = median_ms(lambda: kernel(grid, (width, height), args, shared_mem=shared), repeats=9)
                    step = 1 if neighbours == 1 else pitch
                    own = cp.arange(row_cells) + (step if neighbours else 0)
                    expected = sum(
                        a[f * stride + own]
                        + (a[f * stride + own - step] + a[f * stride + own + step] if neighbours else 0.0)
                        for f in range(fields)
                    )
                    assert bool(cp.allclose(b[:row_cells], expected))
                    occupancy = "full" if warps_per_sm is None else f"warps_{warps_per_sm}"
                    rates[f"read_{fields}_block_{width}x{height}_{occupancy}_neighbours_{neighbours}"] = {
                        "fields": fields,
                        "block": [width, height],
                        "warps_per_sm": warps_per_sm,
                        "loads_per_s": rows * row_cells * fields * (3 if neighbours else 1) / (ms * 1e-3),
                        "ms": ms,
                    }
        kernel.max_dynamic_shared_size_bytes = 0
    return rates


def l2_mix_rates(l2_bytes: int) -> dict[str, dict[str, float]]:
    """L2 bytes per second of 8-B loads past L1, 8-B stores, and copies within L2 (a load and a store per lane),
    each block on a part of its own, about a third of the L2 in all (two thirds for the copies), at 256 to 1024
    threads per block (64 warps per SM): the L2 bandwidth a stencil's loads see, and what its stores cost next to
    its loads."""
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    a = cp.random.random(l2_bytes // 8 // 2) + 0.5
    b = cp.random.random(l2_bytes // 8 // 2) + 0.5
    out = cp.zeros(1)
    kernel = MODULE.get_function("l2_mix")
    rates = {}
    for threads in (256, 512, 1024):
        blocks = sms * 2048 // threads
        part_len = 8 * threads * max(1, round(l2_bytes / 3 / 8 / blocks / (8 * threads)))
        assert blocks * part_len <= a.size
        for mode, name, moved in ((0, "load", 1), (1, "store", 1), (2, "copy", 2)):
            passes = max(2, int(4e9 / (blocks * part_len * 8 * moved)))
            ms = median_ms(
                lambda: kernel((blocks,), (threads,), (a, b, out, np.int64(part_len), np.int32(passes), np.int32(mode)))
            )
            rates[f"{name}_{threads}"] = {
                "bytes_per_s": moved * blocks * part_len * 8 * passes / (ms * 1e-3),
                "threads": threads,
                "blocks": blocks,
            }
    return rates


def l2_capacity_curves(l2_bytes: int) -> dict[str, dict[str, float]]:
    """Read bandwidth by data volume, from a sixteenth to four times the L2, with every block reading a part of
    its own (``own``) or sharing its part with a block far away (``shared``): on an L2 in two partitions, whether
    shared data take room in both. Each point reads about 4 GB in one launch of 4 blocks of 512 threads per SM."""
    sms = cp.cuda.Device().attributes["MultiProcessorCount"]
    blocks = 4 * sms
    assert blocks % 97
    top = 4 * l2_bytes
    a = cp.random.random(top // 8 + 1024) + 0.5
    out = cp.zeros(1)
    kernel = MODULE.get_function("read_parts")
    curves = {}
    for mode, readers in (("own", 1), ("shared", 2)):
        parts = blocks // readers
        for sixteenths in (1, 2, 4, 6, 8, 10, 11, 12, 13, 14, 15, 16, 18, 20, 24, 32, 48, 64):
            volume = l2_bytes * sixteenths // 16
            part_len = volume // parts // 16
            passes = max(2, int(4e9 / (blocks * part_len * 16)))
            ms = median_ms(
                lambda: kernel((blocks,), (512,), (a, out, np.int64(part_len), np.int32(readers), np.int32(passes)))
            )
            curves[f"{mode}_{sixteenths}_16"] = {
                "volume_bytes": parts * part_len * 16,
                "readers": readers,
                "bytes_per_s": blocks * part_len * 16 * passes / (ms * 1e-3),
            }
    return curves


#: each figure of the JSON and how it is measured, in the order they are run
FIGURES = {
    "dram_scale_gbs": dram_scale_gbs,
    "l2_read_gbs": l2_read_gbs,
    "l2_request_rates": l2_request_rates,
    "l2_chase_4MiB": lambda: chase_latency(4 << 20, 200_000, seed=1),
    "dram_chase_256MiB": lambda: chase_latency(256 << 20, 100_000, seed=2),
    "l2_store_rates": l2_store_rates,
    "in_flight_l2_8MiB": lambda: in_flight_rates(8 << 20, rounds=256),
    "in_flight_dram_256MiB": lambda: in_flight_rates(256 << 20, rounds=128),
    "dram_run_rates": dram_run_rates,
    "l2_mix_rates": lambda: l2_mix_rates(cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]),
    "field_count_rates": field_count_rates,
    "partly_stored_line_rates": partly_stored_line_rates,
    "partly_stored_line_widths": partly_stored_line_widths,
    "neighbour_read_widths": neighbour_read_widths,
    "l2_capacity_curves": lambda: l2_capacity_curves(cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"]),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures here as JSON")
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(FIGURES),
        metavar="FIGURE",
        help=f"measure only these figures (of {', '.join(FIGURES)})",
    )
    args = parser.parse_args()
    props = cp.cuda.runtime.getDeviceProperties(0)
    figures = {
        "device": props["name"].decode(),
        "sm_count": props["multiProcessorCount"],
        "l2_bytes": props["l2CacheSize"],
        **{name: measure() for name, measure in FIGURES.items() if not args.only or name in args.only},
    }
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
