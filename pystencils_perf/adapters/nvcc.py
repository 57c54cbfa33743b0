"""Registers and spills of generated CUDA code, as ptxas reports them (``nvcc -cubin --resource-usage``).

Occupancy depends on the registers a thread needs, and thread folding raises
that number; only the compiler knows it. Compilation takes about a second per
kernel, so results are cached per source text and architecture.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from ..errors import PerfError
from ..resources import ResourceUsage

#: the architecture used where a device names none
DEFAULT_ARCH = "sm_90"


def nvcc_path() -> str | None:
    return shutil.which("nvcc")


@functools.cache
def supported_archs() -> tuple[str, ...]:
    """The ``sm_XY`` codes this nvcc can compile for."""
    result = subprocess.run([nvcc_path() or "nvcc", "--list-gpu-code"], capture_output=True, text=True)
    return tuple(a for a in result.stdout.split() if re.fullmatch(r"sm_\d+", a))


def arch_for(compute_capability: str | None) -> str:
    """``sm_XY`` of a compute capability ``"X.Y"``, or the nearest one this nvcc supports.

    nvcc 13 dropped Volta (sm_70): a V100 kernel is compiled for sm_75, the
    nearest architecture with the same 64 K registers per SM.
    """
    if not compute_capability:
        return DEFAULT_ARCH
    wanted = int(compute_capability.replace(".", ""))
    supported = supported_archs()
    if not supported:
        return f"sm_{wanted}"
    return min(supported, key=lambda a: (abs(int(a[3:]) - wanted), int(a[3:])))


def cuda_source(kernel) -> str:
    """A compilable translation unit for a pystencils GPU kernel, as pystencils' own cupy JIT assembles it."""
    headers = sorted(h for h in kernel.required_headers if h != '"pystencils_runtime/half.h"')
    includes = "\n".join(f"#include {h}" for h in headers)
    return f'{includes}\n#include <cstdint>\n\n#define RESTRICT __restrict__\n\nextern "C" {kernel.get_c_code()}\n'


def kernel_resources(kernel, arch: str = DEFAULT_ARCH) -> ResourceUsage:
    """Registers and spills of a pystencils GPU kernel compiled for `arch`."""
    from pystencils.include import get_pystencils_include_path

    return compile_resources(cuda_source(kernel), kernel.name, arch, get_pystencils_include_path())


@functools.lru_cache(maxsize=512)
def compile_resources(source: str, function: str, arch: str, include_dir: str = "") -> ResourceUsage:
    """Compile `source` to a cubin for `arch` and read ptxas' resource report of `function`."""
    nvcc = nvcc_path()
    if nvcc is None:
        raise PerfError("nvcc was not found on PATH: registers per thread cannot be measured")
    with tempfile.TemporaryDirectory(prefix="pystencils-perf-nvcc-") as tmp:
        cu = Path(tmp) / f"{function}.cu"
        cu.write_text(source)
        cmd = [nvcc, "-cubin", "--resource-usage", f"-arch={arch}", "-o", str(Path(tmp) / "k.cubin"), str(cu)]
        if include_dir:
            cmd.insert(1, f"-I{include_dir}")
        result = subprocess.run(cmd, capture_output=True, text=True)
    report = result.stdout + result.stderr
    if result.returncode != 0:
        first = next((line for line in report.splitlines() if "error" in line), report.strip()[-300:])
        raise PerfError(f"nvcc could not compile kernel {function!r} for {arch}: {first.strip()}")
    return parse_resource_usage(report, function, arch)


def parse_resource_usage(report: str, function: str, arch: str) -> ResourceUsage:
    """The ptxas ``--resource-usage`` lines of `function` as a `ResourceUsage`."""
    section = report.split(f"Function properties for {function}", 1)
    if len(section) != 2:
        raise PerfError(f"ptxas reported no resource usage for kernel {function!r}")
    text = section[1].split("Function properties for", 1)[0]
    registers = re.search(r"Used (\d+) registers", text)
    spills = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", text)
    smem = re.search(r"(\d+) bytes smem", text)
    if registers is None or spills is None:
        raise PerfError(f"cannot read registers and spills of kernel {function!r} from ptxas: {text.strip()[:200]}")
    return ResourceUsage(
        arch=arch,
        registers_per_thread=int(registers.group(1)),
        spill_store_bytes=int(spills.group(1)),
        spill_load_bytes=int(spills.group(2)),
        shared_memory_bytes=int(smem.group(1)) if smem else 0,
    )
