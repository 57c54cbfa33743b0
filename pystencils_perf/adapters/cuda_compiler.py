"""Registers and spills of CUDA code, as ptxas reports them: through nvcc, or through NVRTC and ptxas.

Occupancy depends on the registers a thread needs, and thread folding raises
that number; only the compiler knows it. Two compilers can tell: ``nvcc`` on
PATH (`Nvcc`), a CUDA toolkit, and NVRTC and ptxas from NVIDIA's pip wheels
(`Nvrtc`), which is how pystencils' cupy JIT builds a kernel it runs and needs no
toolkit. Per architecture the first compiler that builds exactly it is used,
nvcc before NVRTC, else the nearest architecture one builds, and the ranking
says that it stands in (`compiler_for`). Compiling takes up to a second per
kernel, so what ptxas reports is kept in memory and on disk (`compiler_cache`),
and a kernel's folds are compiled together (`compile_units`).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import re
import shutil
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from ..errors import PerfError
from .compiler_cache import compiler_output, entry
from ..parallel import available_cores
from ..resources import ResourceUsage

#: the architecture used where a device names none
DEFAULT_ARCH = "sm_90"
#: what messages call the compilers this module finds
COMPILER_NAMES = "nvcc or NVRTC"


@dataclass(frozen=True)
class Nvcc:
    """A CUDA toolkit's nvcc (``nvcc -cubin --resource-usage``)."""

    path: str

    @functools.cached_property
    def name(self) -> str:
        version = re.search(r"release (\d+\.\d+)", _output([self.path, "--version"]))
        return f"nvcc {version.group(1)}" if version else "nvcc"

    @functools.cached_property
    def archs(self) -> tuple[str, ...]:
        return tuple(a for a in _output([self.path, "--list-gpu-code"]).split() if re.fullmatch(r"sm_\d+", a))

    def ptxas_report(
        self, source: str, function: str, arch: str, include_dirs: tuple[str, ...], cubin: Path | None = None
    ) -> str:
        """ptxas' resource report of `source`; `cubin`: where to keep the binary (by default it is discarded)."""
        with tempfile.TemporaryDirectory(prefix="pystencils-perf-nvcc-") as tmp:
            cu = Path(tmp) / f"{function}.cu"
            cu.write_text(source)
            cmd = [
                self.path,
                *(f"-I{d}" for d in include_dirs),
                "-cubin",
                "--resource-usage",
                f"-arch={arch}",
                "-o",
                str(cubin or Path(tmp) / "k.cubin"),
                str(cu),
            ]
            result = subprocess.run(cmd, capture_output=True, text=True)
        report = result.stdout + result.stderr
        if result.returncode != 0:
            first = next((line for line in report.splitlines() if "error" in line), report.strip()[-300:])
            raise PerfError(f"{self.name} could not compile kernel {function!r} for {arch}: {first.strip()}")
        return report


@dataclass(frozen=True)
class Nvrtc:
    """NVRTC (source to PTX, in-process) and the ptxas of the same CUDA release, from NVIDIA's pip wheels.

    ``nvidia-cuda-nvrtc-cuXX`` with ``nvidia-cuda-nvcc-cuXX``, ``-runtime-`` and ``-cccl-`` for the headers:
    source to PTX in-process, then ``ptxas -v``. This is how pystencils' cupy JIT builds a kernel it runs
    (NVRTC, then the driver's ptxas), and it needs no toolkit."""

    library: str
    ptxas: str
    #: CUDA runtime and CCCL headers: pystencils' runtime headers include ``cuda_fp16.h`` and ``cuda/std/*``
    header_dirs: tuple[str, ...]

    @functools.cached_property
    def _lib(self):
        return ctypes.CDLL(self.library)

    @functools.cached_property
    def name(self) -> str:
        major, minor = ctypes.c_int(), ctypes.c_int()
        self._lib.nvrtcVersion(ctypes.byref(major), ctypes.byref(minor))
        return f"NVRTC {major.value}.{minor.value} + ptxas"

    @functools.cached_property
    def archs(self) -> tuple[str, ...]:
        count = ctypes.c_int()
        if self._lib.nvrtcGetNumSupportedArchs(ctypes.byref(count)) != 0:
            return ()
        values = (ctypes.c_int * count.value)()
        self._lib.nvrtcGetSupportedArchs(values)
        return tuple(f"sm_{v}" for v in values)

    def ptxas_report(
        self, source: str, function: str, arch: str, include_dirs: tuple[str, ...], cubin: Path | None = None
    ) -> str:
        """ptxas' resource report of `source`; `cubin`: where to keep the binary (by default it is discarded)."""
        ptx = self._ptx(source, function, arch, (*include_dirs, *self.header_dirs))
        with tempfile.TemporaryDirectory(prefix="pystencils-perf-ptxas-") as tmp:
            path = Path(tmp) / f"{function}.ptx"
            path.write_bytes(ptx)
            result = subprocess.run(
                [self.ptxas, "-v", f"-arch={arch}", "-o", str(cubin or Path(tmp) / "k.cubin"), str(path)],
                capture_output=True,
                text=True,
            )
        report = result.stdout + result.stderr
        if result.returncode != 0:
            raise PerfError(f"ptxas could not assemble kernel {function!r} for {arch}: {report.strip()[-300:]}")
        return report

    def _ptx(self, source: str, function: str, arch: str, include_dirs: tuple[str, ...]) -> bytes:
        with _thread_locale_kept():
            return self._compile(source, function, arch, include_dirs)

    def _compile(self, source: str, function: str, arch: str, include_dirs: tuple[str, ...]) -> bytes:
        lib, program = self._lib, ctypes.c_void_p()
        if lib.nvrtcCreateProgram(ctypes.byref(program), source.encode(), f"{function}.cu".encode(), 0, None, None):
            raise PerfError(f"NVRTC could not take kernel {function!r}")
        try:
            options = [f"--gpu-architecture=compute_{arch[3:]}", "-std=c++17", *(f"-I{d}" for d in include_dirs)]
            array = (ctypes.c_char_p * len(options))(*(o.encode() for o in options))
            if lib.nvrtcCompileProgram(program, len(options), array):
                size = ctypes.c_size_t()
                lib.nvrtcGetProgramLogSize(program, ctypes.byref(size))
                log = ctypes.create_string_buffer(size.value)
                lib.nvrtcGetProgramLog(program, log)
                first = next((line for line in log.value.decode(errors="replace").splitlines() if "error" in line), "")
                raise PerfError(f"{self.name} could not compile kernel {function!r} for {arch}: {first.strip()}")
            size = ctypes.c_size_t()
            lib.nvrtcGetPTXSize(program, ctypes.byref(size))
            ptx = ctypes.create_string_buffer(size.value)
            lib.nvrtcGetPTX(program, ptx)
            return ptx.value
        finally:
            lib.nvrtcDestroyProgram(ctypes.byref(program))


CudaCompiler = Nvcc | Nvrtc


@contextlib.contextmanager
def _thread_locale_kept():
    """Restore the calling thread's locale: NVRTC switches it to "C" (``uselocale``) and leaves it so, after
    which Python would read and write text files as ASCII."""
    libc = ctypes.CDLL(None)
    libc.uselocale.restype = ctypes.c_void_p
    libc.uselocale.argtypes = [ctypes.c_void_p]
    before = libc.uselocale(None)
    try:
        yield
    finally:
        libc.uselocale(before)


def _output(cmd: list[str]) -> str:
    return subprocess.run(cmd, capture_output=True, text=True).stdout


def wheel_dir(package: str) -> Path | None:
    """Where one of NVIDIA's ``nvidia.cuda_*`` wheels is installed, if it is."""
    try:
        spec = importlib.util.find_spec(f"nvidia.{package}")
    except ModuleNotFoundError:
        return None
    locations = list(spec.submodule_search_locations or ()) if spec else []
    return Path(locations[0]) if locations else None


def find_nvrtc() -> Nvrtc | None:
    """NVRTC and ptxas from the ``nvidia-cuda-nvrtc-cuXX`` and ``nvidia-cuda-nvcc-cuXX`` wheels, if both are installed."""
    nvrtc_dir, nvcc_dir = wheel_dir("cuda_nvrtc"), wheel_dir("cuda_nvcc")
    if nvrtc_dir is None or nvcc_dir is None:
        return None
    library = next(iter(sorted((nvrtc_dir / "lib").glob("libnvrtc.so.*"))), None)
    ptxas = nvcc_dir / "bin" / "ptxas"
    if library is None or not ptxas.is_file():
        return None
    headers = tuple(
        str(d / "include")
        for d in (wheel_dir("cuda_runtime"), wheel_dir("cuda_cccl"))
        if d is not None and (d / "include").is_dir()
    )
    return Nvrtc(str(library), str(ptxas), headers)


def nvrtc_for(arch: str) -> tuple[Nvrtc, str] | None:
    """The NVRTC wheels' compiler and `arch` (``sm_XY``) where it builds exactly that, else None: an older compiler
    than nvcc 13, nearer to the ones that built binaries measured before it (the validations' compiled tables)."""
    nvrtc = find_nvrtc()
    return (nvrtc, arch) if nvrtc is not None and arch in nvrtc.archs else None


@functools.cache
def available_compilers() -> tuple[CudaCompiler, ...]:
    """The compilers found, in the order they are preferred: nvcc on PATH, then NVRTC from pip wheels."""
    found: list[CudaCompiler] = []
    if path := shutil.which("nvcc"):
        found.append(Nvcc(path))
    if nvrtc := find_nvrtc():
        found.append(nvrtc)
    return tuple(c for c in found if c.archs)


def compiler_for(compute_capability: str | None) -> tuple[CudaCompiler, str] | None:
    """The compiler and ``sm_XY`` to build for a device of `compute_capability` ``"X.Y"``, or None without one.

    The first compiler that builds exactly that architecture; else the nearest
    architecture any compiler builds (nvcc 13 dropped Volta's sm_70, so nvcc 13
    alone builds a V100 kernel for sm_75, the nearest with the same 64 K registers
    per SM).
    """
    compilers = available_compilers()
    if not compilers:
        return None
    wanted = int(compute_capability.replace(".", "")) if compute_capability else int(DEFAULT_ARCH[3:])
    for compiler in compilers:
        if f"sm_{wanted}" in compiler.archs:
            return compiler, f"sm_{wanted}"
    return min(
        ((c, a) for c in compilers for a in c.archs), key=lambda ca: (abs(int(ca[1][3:]) - wanted), int(ca[1][3:]))
    )


@dataclass(frozen=True)
class TranslationUnit:
    """A pystencils GPU kernel (CUDA or HIP) as pystencils' own cupy JIT assembles its translation unit: the
    prelude's and the kernel's own headers, and the kernel with C linkage (its name unmangled)."""

    includes: tuple[str, ...]
    function: str
    #: the kernel's definition, ``extern "C"`` included
    code: str

    @classmethod
    def of(cls, kernel, prelude: tuple[str, ...] = ()) -> TranslationUnit:
        headers = sorted(h for h in kernel.required_headers if h != '"pystencils_runtime/half.h"')
        return cls((*prelude, *headers), kernel.name, f'extern "C" {kernel.get_c_code()}\n')

    @property
    def source(self) -> str:
        return _source(self.includes, self.code)


def _source(includes, code: str) -> str:
    return "\n".join(f"#include {h}" for h in includes) + f"\n\n#define RESTRICT __restrict__\n\n{code}"


def translation_unit(kernel, prelude: tuple[str, ...] = ()) -> str:
    """The source of a pystencils GPU kernel's `TranslationUnit`."""
    return TranslationUnit.of(kernel, prelude).source


def cuda_unit(kernel) -> TranslationUnit:
    """A pystencils CUDA kernel's translation unit, as pystencils' own cupy JIT assembles it for NVRTC."""
    return TranslationUnit.of(kernel, ("<cuda/std/cstdint>",))


def kernels_resources(kernels, arch: str, compiler: CudaCompiler) -> tuple[ResourceUsage, ...]:
    """Registers and spills of pystencils GPU kernels (a kernel's folds) compiled for `arch`."""
    from pystencils.include import get_pystencils_include_path

    return compile_units(tuple(cuda_unit(k) for k in kernels), arch, compiler, (get_pystencils_include_path(),))


@functools.lru_cache(maxsize=128)
def compile_units(
    units: tuple[TranslationUnit, ...], arch: str, compiler: CudaCompiler, include_dirs: tuple[str, ...] = ()
) -> tuple[ResourceUsage, ...]:
    """ptxas' resource report of each of `units` compiled for `arch`, kept on disk per unit (`compiler_cache`).

    The units no earlier call kept are compiled together, one translation unit per core: nvcc spends most of a
    small kernel's half second starting and reading the headers, once per translation unit, and ptxas compiles
    each function alone, so that each reports what it would report compiled by itself."""
    entries = {u: entry(compiler, arch, u.function, u.source) for u in dict.fromkeys(units)}
    reports = {u: kept.read() for u, kept in entries.items()}
    missing = [u for u, texts in reports.items() if texts is None]
    cores = available_cores()
    groups = [missing[g::cores] for g in range(min(len(missing), cores))]
    with ThreadPoolExecutor(max_workers=max(1, len(groups))) as pool:
        for group, texts in zip(groups, pool.map(lambda g: _reports(g, arch, compiler, include_dirs), groups)):
            for unit, text in zip(group, texts):
                entries[unit].write((text,))
                reports[unit] = (text,)
    return tuple(parse_resource_usage(reports[u][0], u.function, arch, compiler.name) for u in units)


def _reports(units: list[TranslationUnit], arch: str, compiler: CudaCompiler, include_dirs) -> list[str]:
    """ptxas' report of each of `units`, from one compilation of all of them: each kernel renamed apart by a
    macro around its code, and its part of the report named back."""
    if len(units) == 1:
        return [compiler.ptxas_report(units[0].source, units[0].function, arch, include_dirs)]
    names = [f"{u.function}__pystencils_perf_{i}" for i, u in enumerate(units)]
    code = "".join(f"#define {u.function} {n}\n{u.code}#undef {u.function}\n" for u, n in zip(units, names))
    try:
        report = compiler.ptxas_report(
            _source(dict.fromkeys(h for u in units for h in u.includes), code), names[0], arch, include_dirs
        )
    except PerfError:  # compiled one by one below, so that the error names the kernel that fails
        report = ""
    parts = {m.group(1): m.group(0) for m in _ENTRY_REPORT.finditer(report)}
    if any(n not in parts for n in names):
        return [compiler.ptxas_report(u.source, u.function, arch, include_dirs) for u in units]
    return [parts[n].replace(n, u.function) for u, n in zip(units, names)]


#: one kernel's part of ptxas' report, from the line that names it to the next one
_ENTRY_REPORT = re.compile(r"^.*Compiling entry function '([^']+)'.*$(?:\n(?!.*Compiling entry function).*)*", re.M)


@functools.lru_cache(maxsize=512)
def compile_resources(
    source: str, function: str, arch: str, compiler: CudaCompiler, include_dirs: tuple[str, ...] = ()
) -> ResourceUsage:
    """Compile `source` for `arch` and read ptxas' resource report of `function` (kept on disk: `compiler_cache`)."""
    (report,) = compiler_output(
        compiler, arch, function, source, lambda: (compiler.ptxas_report(source, function, arch, include_dirs),)
    )
    return parse_resource_usage(report, function, arch, compiler.name)


def parse_resource_usage(report: str, function: str, arch: str, compiler: str = "") -> ResourceUsage:
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
        compiler=compiler,
    )
