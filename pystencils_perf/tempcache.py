"""pystencils' cache in a temporary folder, so that tools and tests never write into the home directory."""

from __future__ import annotations

import os
import tempfile

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
