"""Held out: what the MI250X's shared-memory convolution launches have in common, read in their compiled code.

    python3 validation/shared_memory/lds_instructions_study.py convolution.cu.hip CACHE.json.gz [--arch gfx90a]
        [--device MI250X-GCD]

Compiles a fixed set of shared-memory configurations (`CONFIGURATIONS`: tiles and block heights, ``read_only``
and ``use_padding`` 0) of the HIP convolution (``convolution.cu.hip`` of MiloLurati/AutoTuning_AMD_vs_Nvidia_GPUs,
compiled, not copied) with hipcc, counts per output what a thread issues after the copy's barrier (LDS reads,
vector ALU instructions) and its VGPRs, and prints them beside the cache's measured time (benchmark_hub's whole
convolution cache of that GPU, held out: nothing is fitted here), with the device cycles per wavefront's LDS read
that the time would be if LDS reads alone took it. Findings: `report.md`, "Held out".
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "data" / "external"))

import validate_shared_memory  # noqa: E402, F401  (sets the temporary pystencils cache)
from compile_convolution_registers import FUNCTION, SHMEM_FIXED  # noqa: E402
from pystencils_perf.adapters import hip_compiler  # noqa: E402
from pystencils_perf.devices import get_device  # noqa: E402
from pystencils_perf.errors import PerfError  # noqa: E402
from pystencils_perf.measure.kernel_tuner import load_tunable_spec, read_kernel_tuner  # noqa: E402

SPEC = HERE.parent / "a100_convolution" / "convolution_any.py"
#: (block_size_x, block_size_y, tile_size_x, tile_size_y): tile heights 1-4 at block heights 1-16, tile widths 1-4,
#: block widths 16-256, chosen before their times were read
CONFIGURATIONS = (
    (64, 1, 1, 1),
    (64, 1, 1, 2),
    (64, 1, 1, 4),
    (64, 2, 1, 4),
    (64, 4, 1, 4),
    (64, 8, 1, 4),
    (64, 16, 1, 4),
    (64, 1, 2, 1),
    (64, 1, 2, 2),
    (64, 1, 2, 4),
    (64, 4, 2, 2),
    (64, 8, 2, 1),
    (64, 1, 4, 1),
    (64, 1, 4, 2),
    (64, 4, 4, 2),
    (32, 2, 1, 2),
    (16, 4, 2, 2),
    (128, 2, 2, 4),
    (256, 1, 1, 4),
    (256, 2, 1, 2),
)
_LDS_READ = re.compile(r"^\s*ds_(?:read|load)", re.MULTILINE)
_VALU = re.compile(r"^\s*v_", re.MULTILINE)


def measured_ms(cache: Path) -> dict[tuple[int, ...], float]:
    """The cache's timed shared-memory launches with ``read_only`` and ``use_padding`` 0, by (bx, by, tx, ty); a
    cache whose entries name no ``use_shmem`` (the MI50's) is all shared memory."""
    return {
        tuple(run.params[k] for k in ("block_size_x", "block_size_y", "tile_size_x", "tile_size_y")): run.time_ms
        for run in read_kernel_tuner(cache).runs
        if (run.params.get("use_shmem", 1), run.params.get("read_only"), run.params.get("use_padding")) == (1, 0, 0)
    }


def compute_counts(assembly: str, outputs: int) -> tuple[float, float]:
    """LDS reads and vector ALU instructions per output that the kernel issues after its barrier (the copy before
    it is a loop; what follows is straight-line code, each instruction once per thread)."""
    code = assembly.split(f"{FUNCTION}:", 1)[1].split("s_endpgm", 1)[0]
    after = code.split("s_barrier", 1)[1]
    return len(_LDS_READ.findall(after)) / outputs, len(_VALU.findall(after)) / outputs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="convolution.cu.hip (see above)")
    parser.add_argument("cache", type=Path, help="the GPU's Kernel Tuner cache of the whole convolution")
    parser.add_argument("--arch", default="gfx90a")
    parser.add_argument("--device", default="MI250X-GCD")
    args = parser.parse_args(argv)
    chosen = hip_compiler.compiler_for(args.arch)
    if chosen is None or chosen[1] != args.arch:
        print(f"lds_instructions_study.py: error: no installed hipcc builds {args.arch}", file=sys.stderr)
        return 2
    compiler, arch = chosen
    device = get_device(args.device)
    try:
        times = measured_ms(args.cache)
        updates = load_tunable_spec(SPEC).lattice_updates
    except (OSError, ValueError, KeyError, PerfError) as error:
        print(f"lds_instructions_study.py: error: {error}", file=sys.stderr)
        return 2
    text = args.source.read_text()
    print("| block | tile | measured ms | LDS reads per output | VALU per output | VGPRs | cycles per LDS read |")
    print("|---|---|---|---|---|---|---|")
    for bx, by, tx, ty in CONFIGURATIONS:
        macros = {**SHMEM_FIXED, "read_only": 0, "use_padding": 0}
        macros.update(block_size_x=bx, block_size_y=by, tile_size_x=tx, tile_size_y=ty)
        source = "".join(f"#define {k} {v}\n" for k, v in macros.items()) + text
        report, assembly = compiler.compile(source, FUNCTION, arch, ())
        vgprs = hip_compiler.parse_resource_usage(report, FUNCTION, arch).registers_per_thread
        lds, valu = compute_counts(assembly, tx * ty)
        time_ms = times.get((bx, by, tx, ty))
        # the device's cycles per wavefront LDS read, were the launch's time all LDS reads
        reads = lds * updates / device.warp_size
        cycles = "" if time_ms is None else f"{time_ms * 1e-3 * device.sm_count * device.clock_ghz * 1e9 / reads:.0f}"
        shown = "" if time_ms is None else f"{time_ms:.3f}"
        print(f"| {bx}x{by} | {tx}x{ty} | {shown} | {lds:.1f} | {valu:.1f} | {vgprs} | {cycles} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
