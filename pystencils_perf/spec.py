"""SPEC files: a Python file that defines `kernel` or `assignments`.

``kernel`` is a pystencils/lbmpy GPU kernel (or anything an adapter plugin
recognises); ``assignments`` are pystencils assignments on fixed-size fields,
which the pystencils adapter turns into a ``Target.CUDA`` kernel. A SPEC may
also define ``domain_shape`` for variable-size fields.
"""

from __future__ import annotations

import os
import runpy
from dataclasses import dataclass
from pathlib import Path

from .errors import PerfError
from .tempcache import use_temporary_pystencils_cache


@dataclass(frozen=True)
class Spec:
    path: str
    kernel: object
    domain_shape: tuple[int, ...] | None = None


def load_spec(path: str | os.PathLike) -> Spec:
    """Run a SPEC file and return what it defines; problems name the file."""
    path = Path(path)
    if not path.is_file():
        raise PerfError(f"SPEC file {path} does not exist")
    use_temporary_pystencils_cache()
    try:
        namespace = runpy.run_path(str(path), run_name="__pystencils_perf_spec__")
    except PerfError:
        raise
    except Exception as e:
        raise PerfError(f"SPEC file {path} failed: {type(e).__name__}: {e}") from e
    kernel = namespace.get("kernel", namespace.get("assignments"))
    if kernel is None:
        raise PerfError(f"SPEC file {path} defines neither `kernel` nor `assignments`")
    shape = namespace.get("domain_shape")
    return Spec(str(path), kernel, tuple(shape) if shape is not None else None)
