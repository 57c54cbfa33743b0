"""SPEC files: a Python file that defines `kernel` or `assignments`, or a file a plugin reads.

``kernel`` is a pystencils/lbmpy GPU kernel (or anything an adapter plugin
recognises); ``assignments`` are pystencils assignments on fixed-size fields,
which the pystencils adapter turns into a ``Target.CUDA`` kernel. A SPEC may
also define ``domain_shape`` for variable-size fields.
"""

from __future__ import annotations

import os
import runpy
import traceback
from dataclasses import dataclass
from pathlib import Path

from .errors import PerfError
from .kernel import parse_domain
from .tempcache import use_temporary_pystencils_cache


@dataclass(frozen=True)
class Spec:
    path: str
    kernel: object
    domain_shape: tuple[int, ...] | None = None


def spec_namespace(path: str | os.PathLike) -> dict:
    """The names a SPEC file defines: a plugin's reading (`perf_load_spec`, e.g. TOML) or the Python file run."""
    from .plugins import get_plugin_manager

    if not os.fspath(path):  # Path("") is the current folder
        raise PerfError("the SPEC file's path is empty")
    path = Path(path)
    if not path.exists():
        raise PerfError(f"SPEC file {path} does not exist")
    if path.is_dir():
        raise PerfError(f"SPEC file {path} is a folder, not a file")
    if not path.is_file():
        raise PerfError(f"SPEC file {path} is not a regular file (a device, a pipe or a socket): give a Python file")
    use_temporary_pystencils_cache()
    if path.suffix != ".py":
        namespace = get_plugin_manager().hook.perf_load_spec(path=str(path))
        if namespace is None:
            raise PerfError(
                f"SPEC file {path} is not Python, and no plugin reads it (a TOML SPEC needs a [kernel] "
                "table, or a description's threads and arrays, and pystencils-perf-cuda)"
            )
        return namespace
    try:
        return runpy.run_path(str(path), run_name="__pystencils_perf_spec__")
    except PerfError:
        raise
    except (Exception, SystemExit) as e:  # a SPEC that calls sys.exit() would end pystencils-perf without a word
        raise PerfError(f"SPEC file {path} failed{_failure(e, path)}") from e


def _failure(error: BaseException, path: Path) -> str:
    """Where and why a SPEC failed, on one line: its line, the error and its first line; for an error without a
    message (a failed ``assert`` in pystencils, say) the function and source line that raised it."""
    frames = traceback.extract_tb(error.__traceback__)
    own = [f for f in frames if Path(f.filename).resolve() == path.resolve()]
    where = f" at line {own[-1].lineno}" if own else ""
    message = str(error).strip().splitlines()
    if message:
        return f"{where}: {type(error).__name__}: {message[0]}"
    raised = frames[-1]
    return f"{where}: {type(error).__name__} in {raised.name} ({Path(raised.filename).name}: {raised.line or '?'})"


def load_spec(path: str | os.PathLike) -> Spec:
    """Read a SPEC file and return what it defines; problems name the file."""
    namespace = spec_namespace(path)
    name = "kernel" if "kernel" in namespace else "assignments"
    if name not in namespace:
        tunable = (
            ": it defines `kernel_for(params)`, the kernels of Kernel Tuner data, which validate and tune --replay "
            "take; accesses and rank take one of them with --params NAME=VALUE,..."
            if "kernel_for" in namespace
            else ""
        )
        raise PerfError(f"SPEC file {path} defines neither `kernel` nor `assignments`{tunable}")
    kernel = namespace[name]
    if kernel is None:  # `kernel` wins over `assignments`: a None there is a mistake, not a request to fall back
        unused = (
            ": its `assignments` are not used; remove `kernel = None` to rank them"
            if "assignments" in namespace
            else ""
        )
        raise PerfError(f"SPEC file {path} sets `{name}` to None{unused}")
    try:
        shape = parse_domain(namespace.get("domain_shape"))
    except PerfError as e:
        raise PerfError(f"SPEC file {path}: {e}") from None
    return Spec(str(path), kernel, shape)
