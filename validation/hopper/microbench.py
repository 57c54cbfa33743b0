"""Memory figures of this machine's GPU for its device file: DRAM and L2 bandwidth, L2 request rate, latencies.

Our own kernels (cupy RawKernel), written after the methods gpu-benches describes (stream scale,
a read-only loop over an L2-sized buffer, one thread chasing a random permutation); none of
its code is used. Times are CUDA-event medians after warm-up; every input is random, never zeros.

    python3 validation/hopper/microbench.py [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics

import cupy as cp
import numpy as np

from pystencils_perf.adapters.pystencils.gpu import time_launches

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
MODULE = cp.RawModule(code=SOURCE)
SLOT_BYTES = 128  # one chased element per 128-B line: no two steps share a line


def median_ms(run, warmup: int = 3, repeats: int = 15) -> float:
    """Median CUDA-event time of `run`, timed as `measure` times its candidates."""
    return statistics.median(time_launches(cp, run, warmup, repeats))


def launch_grid() -> int:
    return 4 * cp.cuda.Device().attributes["MultiProcessorCount"]


def dram_scale_gbs(n: int = 1 << 28) -> float:
    """Stream scale b = s * a on two 2-GiB arrays: bytes read plus written per second."""
    a = cp.random.random(n) + 0.5
    b = cp.empty_like(a)
    kernel = MODULE.get_function("scale")
    ms = median_ms(lambda: kernel((launch_grid() * 8,), (256,), (a, b, np.float64(1.5), np.int64(n))))
    assert bool(cp.allclose(b[:1000], 1.5 * a[:1000]))
    return 2 * n * 8 / (ms * 1e-3) / 1e9


def l2_read_gbs(buffer_bytes: int = 16 << 20, passes: int = 64) -> float:
    """Loads per second from a 16-MiB buffer that stays in L2, read 64 times per launch."""
    n = buffer_bytes // 16
    a = cp.random.random(2 * n) + 0.5
    out = cp.zeros(1)
    kernel = MODULE.get_function("read_passes")
    ms = median_ms(lambda: kernel((launch_grid() * 8,), (256,), (a, out, np.int64(n), np.int32(passes))))
    return passes * n * 16 / (ms * 1e-3) / 1e9


def l2_request_rates(buffer_bytes: int = 16 << 20) -> dict[str, dict[str, float]]:
    """L2 loads, requests and sectors per second by the stride of 8-B loads (one warp load: 32 lanes)."""
    a = cp.random.random(buffer_bytes // 8) + 0.5
    out = cp.zeros(1)
    kernel = MODULE.get_function("read_strided")
    rates = {}
    for stride in (1, 2, 4, 8, 16, 32):
        count = buffer_bytes // 8 // stride
        lanes_per_line = max(1, 16 // stride)  # 128-B lines
        lanes_per_sector = max(1, 4 // stride)  # 32-B sectors
        passes = max(1, int(4e8 / count))
        ms = median_ms(lambda: kernel((launch_grid() * 8,), (256,),
                                      (a, out, np.int64(count), np.int64(stride), np.int32(passes))))
        loads = passes * count / (ms * 1e-3)
        rates[f"stride_{8 * stride}B"] = {"loads_per_s": loads, "requests_per_s": loads / lanes_per_line,
                                          "sectors_per_s": loads / lanes_per_sector,
                                          "sector_bytes_per_s": 32 * loads / lanes_per_sector}
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
    return {"cycles": statistics.median(int(c.get()) for c in cycles[1:]) / steps, "ns": ms * 1e6 / steps,
            "slots": slots, "steps_per_launch": steps}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the figures here as JSON")
    args = parser.parse_args()
    props = cp.cuda.runtime.getDeviceProperties(0)
    figures = {
        "device": props["name"].decode(),
        "sm_count": props["multiProcessorCount"],
        "l2_bytes": props["l2CacheSize"],
        "dram_scale_gbs": dram_scale_gbs(),
        "l2_read_gbs": l2_read_gbs(),
        "l2_request_rates": l2_request_rates(),
        "l2_chase_4MiB": chase_latency(4 << 20, 200_000, seed=1),
        "dram_chase_256MiB": chase_latency(256 << 20, 100_000, seed=2),
    }
    text = json.dumps(figures, indent=1)
    print(text)
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
