"""What a compiler printed about a kernel, kept on disk beside pystencils' own cache: compiling each fold for its
registers takes a third of a second to a second, and a script that calls `create_kernel` runs again and again.

The key is everything the output depends on: the compiler (its name with its version, and its fields: where it is
installed), the architecture, the kernel's function name and source, and the pystencils version whose runtime
headers the source includes. What is kept is the compiler's text, not what was read from it, so that a reader fixed later
reads old entries afresh. An entry that cannot be read or written is compiled again, as without the cache.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from ..errors import PerfError
from ..outputs import write_text
from ..tempcache import pystencils_perf_cache_folder

#: the first key of every entry; another value is an entry of another format, compiled again
ENTRY_FORMAT = "pystencils-perf compiler output 1"


def cache_folder() -> Path:
    """Where the compiler's outputs are kept (`tempcache.pystencils_perf_cache_folder`)."""
    return pystencils_perf_cache_folder("compiler-output")


def compiler_output(
    compiler, arch: str, function: str, source: str, compile_: Callable[[], tuple[str, ...]]
) -> tuple[str, ...]:
    """The texts `compile_` returns for `source` (a report, an assembly listing), from the disk where an earlier
    call kept them, else compiled now and kept."""
    kept = entry(compiler, arch, function, source)
    texts = kept.read()
    if texts is None:
        texts = tuple(compile_())
        kept.write(texts)
    return texts


@dataclass(frozen=True)
class Entry:
    """Where what the compiler printed about one source is kept, under its key."""

    key: str
    path: Path

    def read(self) -> tuple[str, ...] | None:
        """The texts an earlier call kept, or None."""
        try:
            kept = json.loads(self.path.read_text())
            if kept.get("format") == ENTRY_FORMAT and kept.get("key") == self.key:
                return tuple(kept["texts"])
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            pass
        return None

    def write(self, texts: tuple[str, ...]) -> None:
        """Keep `texts` for the next call."""
        _keep(self.path, {"format": ENTRY_FORMAT, "key": self.key, "texts": list(texts)})


def entry(compiler, arch: str, function: str, source: str) -> Entry:
    """The entry of `source` compiled by `compiler` for `arch`."""
    from ..tune.record import software_versions  # here: the tune package imports numpy, which loading a plugin must not

    key = json.dumps(
        [ENTRY_FORMAT, repr(compiler), compiler.name, arch, function, software_versions()["pystencils"], source]
    )
    return Entry(key, cache_folder() / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.json")


def _keep(path: Path, entry: dict) -> None:
    """Write `entry` whole or not at all (`outputs.write_text`); a folder that takes no files keeps none."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_text(path, json.dumps(entry))
    except (OSError, PerfError):
        pass
