"""The tuning record: what was measured for one kernel on one device, kept on disk so that it is measured once.

A record is keyed by the kernel's hash (its description and candidate space)
and the device's fingerprint (name, compute capability, driver, CUDA runtime,
pystencils and pystencils-perf versions); a change to any of them is another
record. Records live in ``$PYSTENCILS_PERF_TUNING_DIR`` or else the user's
cache directory (platformdirs), one JSON file per key. They are written whole
(`outputs.replacing_file`), so a reader sees a whole record or none, and two
processes tuning the same kernel at once each write a whole record (the last
one stays). A file that cannot be read, or that holds another key, is
warned about in one line and tuned again.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigurationError
from ..outputs import check_writable, replacing_file

#: the environment variable that overrides where records are kept
TUNING_DIR_ENV = "PYSTENCILS_PERF_TUNING_DIR"
#: what the first key of every record says; another value is a foreign file
RECORD_FORMAT = "pystencils-perf tuning record 1"


def tuning_dir() -> Path:
    """Where records are kept: ``$PYSTENCILS_PERF_TUNING_DIR``, else the user's cache directory."""
    if os.environ.get(TUNING_DIR_ENV):
        return Path(os.environ[TUNING_DIR_ENV])
    import platformdirs

    return Path(platformdirs.user_cache_dir("pystencils-perf")) / "tuning"


def software_versions(distributions: tuple[str, ...] = ("pystencils", "pystencils-perf")) -> dict[str, str]:
    """The installed version of each of `distributions` ("not installed" where absent), by its name with ``_`` for
    ``-``; by default pystencils' and pystencils-perf's, part of every device fingerprint."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(distribution: str) -> str:
        try:
            return version(distribution)
        except PackageNotFoundError:
            return "not installed"

    return {name.replace("-", "_"): installed(name) for name in distributions}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def kernel_hash(*parts: Any) -> str:
    """A hash of what describes the kernel and its candidates (JSON-able parts, or bytes)."""
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part if isinstance(part, bytes) else _canonical(part).encode())
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass(frozen=True)
class RecordKey:
    """The kernel's hash and the device fingerprint: everything a measured time depends on."""

    kernel: str
    device: dict[str, str]

    def as_json(self) -> dict:
        return {"kernel": self.kernel, "device": dict(sorted(self.device.items()))}

    @property
    def file_name(self) -> str:
        return f"{kernel_hash(self.as_json())[:24]}.json"


@dataclass
class TuningRecord:
    """Every candidate measured, in order, with its time in ms (None: it failed to run), and why tuning stopped.

    `complete` is False while tuning, and after an interruption: a later call goes on from here.
    `stopped_by` is "budget", "rule" (nothing better was likely), "all" (every candidate measured) or
    "interrupted"; `stop_reason` says it in a sentence.
    """

    key: RecordKey
    measured: list[dict] = field(default_factory=list)
    stopped_by: str = ""
    stop_reason: str = ""
    complete: bool = False

    def best(self) -> dict | None:
        timed = [m for m in self.measured if m["time_ms"] is not None]
        return min(timed, key=lambda m: m["time_ms"]) if timed else None

    def as_json(self) -> dict:
        return {
            "format": RECORD_FORMAT,
            "key": self.key.as_json(),
            "measured": self.measured,
            "best": self.best(),
            "stopped_by": self.stopped_by,
            "stop_reason": self.stop_reason,
            "complete": self.complete,
        }


def _warn(message: str) -> None:
    print(f"pystencils-perf: warning: {message}", file=sys.stderr)


def _valid_measurement(entry) -> bool:
    return (
        isinstance(entry, dict)
        and isinstance(entry.get("params"), dict)
        and (entry.get("time_ms") is None or (isinstance(entry["time_ms"], (int, float)) and entry["time_ms"] > 0))
    )


class RecordStore:
    """Records in one folder (`tuning_dir()` by default)."""

    def __init__(self, folder: str | Path | None = None):
        self.folder = Path(folder) if folder is not None else tuning_dir()

    def path(self, key: RecordKey) -> Path:
        return self.folder / key.file_name

    def check_writable(self) -> None:
        """Create the folder and refuse one that cannot hold records, before any ranking or measurement."""
        source = f"{TUNING_DIR_ENV}={os.environ[TUNING_DIR_ENV]}: " if os.environ.get(TUNING_DIR_ENV) else ""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ConfigurationError(
                f"{source}cannot create the tuning record folder {self.folder} ({e.strerror or e})"
            ) from None
        try:
            check_writable(self.folder)
        except ConfigurationError as e:
            raise ConfigurationError(f"{source}{e}") from None

    def load(self, key: RecordKey) -> TuningRecord | None:
        """The record of `key`, or None (with a one-line warning if a file is there but unusable)."""
        path = self.path(key)
        if not path.exists():
            return None
        try:
            data = json.loads(path.read_text())
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
            _warn(f"tuning record {path} is unreadable ({type(e).__name__}); tuning again")
            return None
        if not isinstance(data, dict) or data.get("format") != RECORD_FORMAT:
            _warn(f"{path} is not a pystencils-perf tuning record; tuning again")
            return None
        if data.get("key") != key.as_json():
            _warn(f"tuning record {path} belongs to another kernel or device; tuning again")
            return None
        measured = data.get("measured")
        if not isinstance(measured, list) or not all(_valid_measurement(m) for m in measured):
            _warn(f"tuning record {path} has malformed measurements; tuning again")
            return None
        return TuningRecord(
            key, measured, str(data.get("stopped_by", "")), str(data.get("stop_reason", "")), bool(data.get("complete"))
        )

    def save(self, record: TuningRecord) -> Path:
        """Write `record` whole (`outputs.replacing_file`: temporary file, then rename)."""
        path = self.path(record.key)
        path.parent.mkdir(parents=True, exist_ok=True)
        with replacing_file(path) as fh:
            json.dump(record.as_json(), fh, indent=1)
        return path
