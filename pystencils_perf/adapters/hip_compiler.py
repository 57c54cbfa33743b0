"""VGPRs, SGPRs, LDS and spills of HIP code for AMD GPUs, as the AMDGPU backend reports them through hipcc.

The counterpart of `cuda_compiler` (same interface: `available_compilers`,
`compiler_for`, `kernels_resources`, `compile_resources`, `parse_resource_usage`).
Occupancy on an AMD GPU depends on the VGPRs a thread needs, and thread
folding raises that number; only the compiler knows it. ROCm's ``hipcc`` (`find_hipcc`)
compiles the device code for the GPU's ``gfx`` architecture and remarks its resources
(`parse_resource_usage`); the same compile writes the kernel's assembly, from which
`assembly_counts` reads how often a wavefront waits for its outstanding loads and the
bytes its spills move. Without a hipcc that builds the device's architecture, nothing
is measured and rankings say that occupancy is assumed.
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import PerfError
from .compiler_cache import compiler_output
from ..parallel import map_on_every_core
from ..resources import AssemblyCounts, ResourceUsage
from .cuda_compiler import translation_unit

#: the architecture used where a device names none (the MI210's and MI250X's CDNA2)
DEFAULT_ARCH = "gfx90a"
#: what messages call the compilers this module finds
COMPILER_NAMES = "hipcc"
#: bytes per lane of one spilled VGPR
SPILLED_VGPR_BYTES = 4
#: architectures whose AGPRs share the VGPR file, so that occupancy counts both (LLVM AMDGPUUsage, gfx90a and
#: later CDNA: "the VGPRs and AGPRs are allocated from a unified register file", arch VGPRs aligned to 4 first)
UNIFIED_REGISTER_FILE = ("gfx90a", "gfx94", "gfx95")


class HipccFailed(PerfError):
    """hipcc exited with an error: the source does not compile for the architecture."""


@dataclass(frozen=True)
class Hipcc:
    """ROCm's hipcc (clang with the AMDGPU backend)."""

    path: str

    @functools.cached_property
    def name(self) -> str:
        """hipcc's HIP version and the clang it drives (``HIP_CLANG_PATH`` may point it at another release's
        clang, whose AMDGPU backend then decides the registers)."""
        report = _output([self.path, "--version"])
        version = re.search(r"HIP version: (\d+\.\d+)", report)
        clang = re.search(r"clang version (\d+\.\d+\.\d+)", report)
        return (f"hipcc {version.group(1)}" if version else "hipcc") + (f" (clang {clang.group(1)})" if clang else "")

    def compile(self, source: str, function: str, arch: str, include_dirs: tuple[str, ...]) -> tuple[str, str]:
        """The backend's resource-usage remarks and the assembly of compiling `source`'s device code for `arch`."""
        with tempfile.TemporaryDirectory(prefix="pystencils-perf-hipcc-") as tmp:
            hip, assembly = Path(tmp) / f"{function}.hip", Path(tmp) / "k.s"
            hip.write_text(source)
            cmd = [
                self.path,
                "-S",
                "--cuda-device-only",
                f"--offload-arch={arch}",
                "-O3",
                "-std=c++17",
                *(f"-I{d}" for d in include_dirs),
                "-Rpass-analysis=kernel-resource-usage",
                "-o",
                str(assembly),
                str(hip),
            ]
            result = subprocess.run(cmd, capture_output=True, text=True, env=_amd_platform())
            report = result.stdout + result.stderr
            if result.returncode != 0:
                first = next((line for line in report.splitlines() if "error" in line), report.strip()[-300:])
                raise HipccFailed(f"{self.name} could not compile kernel {function!r} for {arch}: {first.strip()}")
            return report, assembly.read_text()


def _amd_platform() -> dict[str, str]:
    """The environment with ``HIP_PLATFORM=amd``: hipcc compiles for NVIDIA GPUs (through nvcc) where it finds
    nvcc and no AMD GPU, as on a machine with the CUDA toolkit, unless told the platform."""
    return {**os.environ, "HIP_PLATFORM": "amd"}


def _output(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True, env=_amd_platform()).stdout


def find_hipcc() -> Hipcc | None:
    """hipcc on PATH, else in ROCm's installation (``$ROCM_PATH/bin``, default ``/opt/rocm/bin``)."""
    if path := shutil.which("hipcc"):
        return Hipcc(path)
    rocm = Path(os.environ.get("ROCM_PATH", "/opt/rocm")) / "bin" / "hipcc"
    return Hipcc(str(rocm)) if rocm.is_file() and os.access(rocm, os.X_OK) else None


@functools.cache
def available_compilers() -> tuple[Hipcc, ...]:
    """The HIP compilers found: hipcc, or none."""
    hipcc = find_hipcc()
    return (hipcc,) if hipcc else ()


#: what HIP code includes first, and what a CUDA source compiled as HIP needs in front (`cuda_source_resources`)
HIP_RUNTIME_HEADER = "<hip/hip_runtime.h>"


#: what `builds` compiles to learn whether a compiler knows an architecture
_PROBE = f'#include {HIP_RUNTIME_HEADER}\nextern "C" __global__ void probe(float *a) {{ a[threadIdx.x] = 0.0f; }}\n'


@functools.cache
def builds(compiler: Hipcc, arch: str) -> bool:
    """Whether `compiler` builds code for `arch`: a ROCm release knows only the architectures of its time (5.2
    has no gfx942, the MI300's) and, for some it knows, lacks the device library (5.2's gfx1100)."""
    try:
        compiler.compile(_PROBE, "probe", arch, ())
    except HipccFailed:
        return False
    return True


def compiler_for(arch: str | None) -> tuple[Hipcc, str] | None:
    """The compiler and ``gfx`` architecture to build for a device of architecture `arch`, or None where no
    installed compiler builds it.

    The device's own architecture only: unlike NVIDIA's, AMD's register files and wavefront sizes differ
    between neighbouring architectures, so a stand-in would give another GPU's occupancy.
    """
    arch = arch or DEFAULT_ARCH
    return next(((compiler, arch) for compiler in available_compilers() if builds(compiler, arch)), None)


def hip_source(kernel) -> str:
    """A translation unit for a pystencils HIP kernel, as hipcc compiles it."""
    return translation_unit(kernel, (HIP_RUNTIME_HEADER,))


def kernels_resources(kernels, arch: str, compiler: Hipcc) -> tuple[ResourceUsage, ...]:
    """VGPRs, SGPRs, LDS and spills of pystencils HIP kernels (a kernel's folds) compiled for `arch`, each
    alone, side by side: one compilation's assembly is read per kernel."""
    from pystencils.include import get_pystencils_include_path

    include_dirs = (get_pystencils_include_path(),)
    return tuple(
        map_on_every_core(lambda k: compile_resources(hip_source(k), k.name, arch, compiler, include_dirs), kernels)
    )


@functools.lru_cache(maxsize=512)
def compile_code(
    source: str, function: str, arch: str, compiler: Hipcc, include_dirs: tuple[str, ...] = ()
) -> tuple[ResourceUsage, AssemblyCounts]:
    """Compile `source` for `arch`: the backend's resource remarks of `function`, with the spill bytes and the
    loads' waits and shared loads its assembly shows. Code without a loop runs each once per thread; in a loop
    they are a lower bound, and the waits and shared loads are left unknown (`ResourceUsage.load_waits_per_thread`,
    `shared_load_words_per_thread`)."""
    report, assembly = compiler_output(
        compiler, arch, function, source, lambda: compiler.compile(source, function, arch, include_dirs)
    )
    counts = assembly_counts(assembly, function)
    usage = parse_resource_usage(report, function, arch, compiler.name)
    return replace(
        usage,
        spill_store_bytes=counts.spill_store_bytes,
        spill_load_bytes=counts.spill_load_bytes,
        load_waits_per_thread=None if counts.looped else float(counts.waits),
        shared_load_words_per_thread=None if counts.looped else float(counts.shared_load_words),
    ), counts


def compile_resources(
    source: str, function: str, arch: str, compiler: Hipcc, include_dirs: tuple[str, ...] = ()
) -> ResourceUsage:
    """Compile `source` for `arch` and read the backend's resource remarks of `function` (and its loads' waits)."""
    return compile_code(source, function, arch, compiler, include_dirs)[0]


def cuda_source_resources(source: str, function: str, arch: str, compiler: Hipcc) -> ResourceUsage:
    """Those of kernel `function` of a CUDA source compiled as HIP: hipcc compiles CUDA's kernel language
    (``threadIdx``, ``__syncthreads``, ``__ldg``, ``__constant__``) once HIP's runtime header declares it, as
    hipify would put it in front. Where CUDA's own headers or intrinsics keep it from compiling, the error says to
    give the HIP port."""
    try:
        return compile_resources(f"#include {HIP_RUNTIME_HEADER}\n{source}", function, arch, compiler)
    except HipccFailed as error:
        raise PerfError(f"{error} (a CUDA source compiled as HIP for an AMD GPU: give the kernel's HIP port)") from None


_VECTOR_LOAD = re.compile(r"^\s*(?:global|buffer|flat|scratch)_load_")
_SPILL = re.compile(r"^\s*(?:buffer|scratch)_(?:load|store)_\w+.*;\s*(\d+)-byte Folded (Spill|Reload)")
_WAIT_VMCNT = re.compile(r"^\s*s_waitcnt\b.*\bvmcnt\((\d+)\)")
#: an FMA opcode at the start of an instruction or of the second half of a dual-issue (VOPD) one
_FMA = re.compile(r"(?:^\s*|::\s*)v_(?:dual_)?(?:pk_)?(?:fma|fmac|fmaak|fmamk|mac)_")
#: where a block starts: its label, or the backend's comment ``; %bb.4:`` for one no branch targets
_BLOCK = re.compile(r"^(?:(\.?[\w$.]+):|; (%bb\.\d+):)")
#: the backend's comments on a block's loop: it heads one (inside a parent loop), or lies in one
_LOOP_COMMENT = re.compile(
    r";.*?(?:Parent Loop (?P<parent>BB\w+)|(?P<header>This (?:Inner )?Loop Header)|in Loop: Header=(?P<member>BB\w+))"
)
#: an LDS read (``ds_read_b32``, ``ds_read2_b64``; ``ds_load_b32``, ``ds_load_2addr_b32`` on gfx11), not a write or
#: an atomic: its two addresses (``read2``, ``2addr``) and the bits each moves (none, as ``ds_read_u8``: one word)
_LDS_READ = re.compile(r"^\s*ds_(?:read|load)(?P<two>2|_2addr)?\w*?(?:_b(?P<bits>\d+))?\b")
_BRANCH = re.compile(r"^\s*s_(?:c)?branch\w*\s+(\.?[\w$.]+)")


def assembly_counts(assembly: str, function: str) -> AssemblyCounts:
    """The `AssemblyCounts` of `function` in AMDGPU assembly (its code from its label to ``s_endpgm``).

    How often a wavefront waits for its outstanding loads is the latency a warp exposes, which the compiler's
    schedule decides (one load in flight per wait where it could not batch them, a dozen where it could); the
    bytes its spill stores and reloads move are not in the remarks (``VGPRs Spill`` counts the stores only, and
    says nothing of how often a spilled value is reloaded).

    Spill bytes are the backend's ``N-byte Folded Spill`` and ``N-byte Folded Reload`` comments on scratch
    accesses; FMAs are ``v_fma*``, ``v_fmac*``, ``v_fmaak*``, ``v_fmamk*`` and ``v_mac*`` (each half of an RDNA3
    dual-issue ``v_dual_fmac_f32 ... :: v_dual_fmac_f32`` counts); shared loads are the words LDS reads load
    (``ds_read*``, ``ds_load*``).

    Loads outstanding are counted in program order: a load adds one, ``s_waitcnt vmcnt(N)`` lets N stay
    outstanding, and is a wait where more were. A branch to a label above it is a loop. Which blocks form a loop
    the backend's comments say (``This Loop Header``, ``in Loop: Header=BB0_3``, ``Parent Loop``): a block placed
    out of line that branches back is none. A loop that loads with no FMA in it or in the loops it holds sets
    `AssemblyCounts.loop_loads_without_fma`.
    """
    body = re.split(rf"^{re.escape(function)}:.*$", assembly, maxsplit=1, flags=re.MULTILINE)
    if len(body) != 2:
        raise PerfError(f"the assembly hipcc wrote has no kernel {function!r}")
    waits = loads = fmas = outstanding = shared_load_words = 0
    spilled = {"Spill": 0, "Reload": 0}
    seen_labels, looped = set(), False
    loops: dict[str, _Loop] = {}
    block, innermost = "", None  # the block and the loop it lies in, by the backend's comments
    for line in body[1].split("s_endpgm", 1)[0].splitlines():
        if spill := _SPILL.match(line):
            spilled[spill.group(2)] += int(spill.group(1))
        if start := _BLOCK.match(line):
            block, innermost = start.group(1) or start.group(2), None
        if comment := _LOOP_COMMENT.search(line):
            parent, member = comment.group("parent", "member")
            if parent or comment.group("header"):
                innermost = loops.setdefault(block.removeprefix(".L"), _Loop())
                if parent:  # the ancestors come outermost first: the last is the parent
                    innermost.parent = parent
            elif member:
                innermost = loops.setdefault(member, _Loop())
        if start:
            seen_labels.add(start.group(1))  # a label, or None for a ``; %bb.N:`` comment
        elif _VECTOR_LOAD.match(line):
            loads, outstanding = loads + 1, outstanding + 1
            if innermost:
                innermost.loads += 1
        elif lds := _LDS_READ.match(line):
            shared_load_words += (2 if lds.group("two") else 1) * max(int(lds.group("bits") or 32) // 32, 1)
        elif wait := _WAIT_VMCNT.match(line):
            allowed = int(wait.group(1))
            waits += outstanding > allowed
            outstanding = min(outstanding, allowed)
        elif fma_opcodes := _FMA.findall(line):
            fmas += len(fma_opcodes)
            if innermost:
                innermost.fmas += len(fma_opcodes)
        elif (branch := _BRANCH.match(line)) and branch.group(1) in seen_labels:
            looped = True
    for loop in loops.values():  # a loop's FMAs count for the loops around it
        outer = loop.parent
        while loop.fmas and outer in loops:
            loops[outer].nested_fmas += loop.fmas
            outer = loops[outer].parent
    return AssemblyCounts(
        waits,
        loads,
        spilled["Spill"],
        spilled["Reload"],
        fmas,
        looped,
        loop_loads_without_fma=any(loop.loads and not loop.fmas + loop.nested_fmas for loop in loops.values()),
        shared_load_words=shared_load_words,
    )


@dataclass
class _Loop:
    """A loop of AMDGPU assembly as its blocks' comments name it: the loads and FMAs of its own blocks, those of
    the loops it holds, and the loop that holds it."""

    loads: int = 0
    fmas: int = 0
    nested_fmas: int = 0
    parent: str | None = None


def _remark(text: str, label: str) -> int | None:
    """The value of one ``label: N`` remark line, or None where the backend does not print it."""
    found = re.search(rf"(?:^|\s){label}: (\d+)", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def parse_resource_usage(report: str, function: str, arch: str, compiler: str = "") -> ResourceUsage:
    """The ``-Rpass-analysis=kernel-resource-usage`` remarks of `function` as a `ResourceUsage`.

    The backend remarks, per kernel, ``SGPRs`` (``TotalSGPRs`` in newer LLVM), ``VGPRs``, ``AGPRs``,
    ``ScratchSize [bytes/lane]``, ``SGPRs Spill``, ``VGPRs Spill`` and ``LDS Size [bytes/block]`` (the format of
    LLVM's test ``llvm/test/CodeGen/AMDGPU/resource-usage-remarks.ll``). Checked against Debian's hipcc 5.2.3
    (``apt-get install hipcc``, LLVM 15's AMDGPU backend), which prints the remarks in that format."""
    section = re.split(rf"Function Name: {re.escape(function)}\b", report, maxsplit=1)
    if len(section) != 2:
        raise PerfError(f"the AMDGPU backend reported no resource usage for kernel {function!r}")
    text = section[1].split("Function Name:", 1)[0]
    sgprs, vgprs = _remark(text, r"(?:Total)?SGPRs"), _remark(text, "VGPRs")
    if sgprs is None or vgprs is None:
        raise PerfError(f"cannot read the VGPRs and SGPRs of kernel {function!r} from hipcc: {text.strip()[:200]}")
    agprs = _remark(text, "AGPRs") or 0
    registers = -(-vgprs // 4) * 4 + agprs if arch.startswith(UNIFIED_REGISTER_FILE) else vgprs
    vgpr_spills = _remark(text, "VGPRs Spill") or 0
    return ResourceUsage(
        arch=arch,
        registers_per_thread=registers,
        # the backend counts VGPR spill stores, not bytes: each is 4 B per lane, and its value is taken as loaded
        # back once (SGPR spills go to VGPR lanes, not to memory); `compile_code` counts both in the assembly
        spill_store_bytes=SPILLED_VGPR_BYTES * vgpr_spills,
        spill_load_bytes=SPILLED_VGPR_BYTES * vgpr_spills,
        spill_kept_bytes=_remark(text, re.escape("ScratchSize [bytes/lane]")),
        shared_memory_bytes=_remark(text, re.escape("LDS Size [bytes/block]")) or 0,
        compiler=compiler,
        scalar_registers=sgprs,
        spilled_registers=vgpr_spills + (_remark(text, "SGPRs Spill") or 0),
    )
