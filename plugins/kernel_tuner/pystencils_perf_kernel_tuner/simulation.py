"""Kernel Tuner caches as its simulation mode reads them."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from pystencils_perf.measure.kernel_tuner import load_cache_json


def simulation_cache(path: str | Path, folder: str | Path | None = None) -> tuple[str, dict]:
    """A copy of the Kernel Tuner cache `path` that simulation mode replays, and its tunable parameters.

    Kernel Tuner 1.5 reads plain ``.json`` only (the repository's caches are gzipped), and a reduced cache
    (``*_noshmem``) keeps the published header's values (``use_shmem: [0, 1]``) without their rows: a search
    that asks for such a configuration ends in "not in cache". The copy is plain JSON in `folder` (a temporary
    folder, removed at exit, by default) and lists only the values its rows use.
    """
    data = load_cache_json(Path(path))
    rows = list(data["cache"].values())
    data["tune_params"] = {
        name: [v for v in values if any(row.get(name) == v for row in rows)]
        for name, values in data["tune_params"].items()
    }
    if folder is None:
        _kept.append(tempfile.TemporaryDirectory(prefix="pystencils-perf-simulation-"))
        folder = _kept[-1].name
    copy = Path(folder) / (Path(path).name.removesuffix(".gz").removesuffix(".json") + ".json")
    copy.write_text(json.dumps(data))
    return str(copy), data["tune_params"]


#: temporary folders of `simulation_cache`, removed at exit
_kept: list[tempfile.TemporaryDirectory] = []
