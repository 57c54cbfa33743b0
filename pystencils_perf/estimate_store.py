"""A ranking's estimates kept on disk for `create_kernel`, beside pystencils' own cache: a script that generates its
kernels runs again and again, and estimating the candidates takes seconds where the rest of the call takes a
fraction of one (docs/performance.md, "A second run").

An entry is keyed by everything the estimates depend on (`entry_key`): the folded kernel models, the launches, the
device's numbers, the options, the registered plugins, and the code that computes them (name, size and modification
time of every file of pystencils-perf's and the plugins' packages; the libraries' versions). An entry that cannot be
read is estimated again; one that cannot be written is not kept. ``PYSTENCILS_PERF_REMEMBER=0`` switches the store
off, as the test suite does, so that a test that patches the model is never answered from another test's entry.
Entries are pickles in the user's own cache folder, where pystencils keeps the kernels it compiles and loads too.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path

from .errors import PerfError
from .outputs import replacing_file
from .tempcache import pystencils_perf_cache_folder

#: the environment variable that switches the store off ("0")
REMEMBER_ENV = "PYSTENCILS_PERF_REMEMBER"
#: the first line of every entry; another one is an entry of another format, estimated again
ENTRY_FORMAT = b"pystencils-perf estimates 1\n"
#: libraries whose versions are part of the key: the estimates' arithmetic and symbolic work
LIBRARIES = ("pystencils", "sympy", "numpy", "islpy", "pluggy")


def enabled() -> bool:
    """Whether estimates are kept and reused (`REMEMBER_ENV`)."""
    return os.environ.get(REMEMBER_ENV, "1") != "0"


def store_folder() -> Path:
    """Where the estimates are kept (`tempcache.pystencils_perf_cache_folder`)."""
    return pystencils_perf_cache_folder("estimates")


def _package_roots(pm) -> list[Path]:
    """The folders (or single files) of pystencils-perf's package and of every registered plugin's top package."""
    names = {__name__.split(".")[0]}
    for plugin in pm.get_plugins():
        module = plugin.__name__ if isinstance(plugin, type(sys)) else type(plugin).__module__
        names.add(module.split(".")[0])
    roots = []
    for name in sorted(names):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        if path:
            path = Path(path)
            roots.append(path.parent if path.name == "__init__.py" else path)
    return roots


def code_fingerprint(pm) -> list:
    """Each file of the packages that estimate (`_package_roots`) with its size and modification time, and the
    versions of `LIBRARIES`."""
    from .tune.record import software_versions  # here: the tune package imports numpy, which loading rank must not

    files = []
    for root in _package_roots(pm):
        paths = [root] if root.is_file() else sorted(p for p in root.rglob("*") if "__pycache__" not in p.parts)
        for path in paths:
            try:
                stat = path.stat()
            except OSError:
                continue
            if path.is_file():
                files.append((str(path), stat.st_size, stat.st_mtime_ns))
    return [files, sorted(software_versions(LIBRARIES).items())]


def entry_key(context: tuple) -> str:
    """The key of `context` (what `rank` estimates: plugin manager, folded models by fold, launches, device,
    options) as a hash of everything its estimates depend on (module docstring)."""
    pm, folded_models, launches, device, options = context
    digest = hashlib.sha256(ENTRY_FORMAT)
    for part in (
        code_fingerprint(pm),
        sorted(name for name, _ in pm.list_name_plugin()),
        sorted(folded_models.items()),
        list(launches),
        device,
        options,
    ):
        digest.update(repr(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


def remembered(context: tuple, estimate: Callable[[], list]) -> list:
    """The estimates of `context` (`entry_key`) as an earlier call kept them, else `estimate()`'s, then kept."""
    if not enabled():
        return estimate()
    key = entry_key(context)
    path = store_folder() / f"{key[:32]}.pickle"
    head = ENTRY_FORMAT + key.encode() + b"\n"
    try:
        data = path.read_bytes()
        if data.startswith(head):
            return pickle.loads(data[len(head) :])
    except Exception:  # a missing, truncated or foreign file: estimated again
        pass
    estimates = estimate()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing_file(path, "wb") as fh:
            fh.write(head + pickle.dumps(estimates, protocol=pickle.HIGHEST_PROTOCOL))
    except (OSError, PerfError, pickle.PicklingError):  # a folder that takes no files keeps none
        pass
    return estimates
