"""pystencils' cache folder: a temporary one, so that tools and tests never write into the home directory, and where
pystencils-perf keeps its own files in it."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

CACHE_ENV = "PYSTENCILS_CACHE_DIR"
_folders: list[tempfile.TemporaryDirectory] = []


def use_temporary_pystencils_cache(prefix: str = "pystencils-perf-") -> str:
    """Point ``PYSTENCILS_CACHE_DIR`` at a folder removed when the process exits, unless the user chose one.

    Call it before pystencils is imported: pystencils reads the variable then.
    """
    if CACHE_ENV not in os.environ:
        folder = tempfile.TemporaryDirectory(prefix=prefix)
        _folders.append(folder)  # kept alive until exit, then removed
        os.environ[CACHE_ENV] = folder.name
    return os.environ[CACHE_ENV]


def pystencils_perf_cache_folder(kind: str) -> Path:
    """``pystencils-perf/<kind>`` in pystencils' cache folder (``$PYSTENCILS_CACHE_DIR``, else the user's cache
    directory): what pystencils-perf keeps on disk (the compiler's reports, the estimates), where tests and tools
    that keep pystencils' cache out of the home directory keep it too."""
    root = os.environ.get(CACHE_ENV)
    if not root:
        import platformdirs

        root = platformdirs.user_cache_dir("pystencils")
    return Path(root) / "pystencils-perf" / kind
