"""Writing output files and folders whole, or not at all.

Every output (a ranking's JSON or CSV, a measured data set, a calibrated device
file, a validation report) is written into a temporary file or folder beside
its destination and renamed into place when complete, so a failure or Ctrl-C
leaves the previous version (or nothing), never half a file.

Two runs writing the same destination do not lock each other out: each writes
its own temporary copy, and the one that finishes last replaces the other's
(a folder file by file, see `replacing_folder`).
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import tempfile
from pathlib import Path

from .errors import ConfigurationError, PerfError


def check_writable(folder: Path) -> None:
    """Refuse a folder no file can be created in (read-only, /proc, no permission), before any work is done.

    Creating and removing a file is the one test that answers for every file system and user, root included.
    """
    try:
        fd, probe = tempfile.mkstemp(dir=folder, prefix=".pystencils-perf-probe-")
    except OSError as e:
        raise ConfigurationError(f"cannot create files in {folder} ({e.strerror or e})") from None
    os.close(fd)
    os.unlink(probe)


def is_special(path: Path) -> bool:
    """An existing file that is not a regular one (/dev/null, /dev/stdout, a pipe): written to, never replaced."""
    return path.exists() and not path.is_file() and not path.is_dir()


def check_writable_file(path: Path) -> None:
    """Refuse a file `replacing_file` could not write, before any work is done."""
    if not is_special(path):
        check_writable(path.parent)
    elif not os.access(path, os.W_OK):
        raise ConfigurationError(f"cannot write to {path} (permission denied)")


def _umask() -> int:
    """The process's file mode creation mask (read by setting it, then setting it back)."""
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: what writing a file may meet that is the disk's, not the program's: one line, not a traceback
WRITE_FAILURES = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EIO, errno.EROFS})


@contextlib.contextmanager
def replacing_file(path, mode: str = "w", **open_args):
    """An open temporary file beside `path` that replaces `path` when the block ends without an exception
    (a special file such as /dev/stdout is written to directly)."""
    path = Path(path)
    if is_special(path):
        try:
            with open(path, mode, **open_args) as fh:
                yield fh
        except OSError as e:
            if e.errno in WRITE_FAILURES:
                raise PerfError(f"cannot write to {path} ({e.strerror})") from None
            raise
        return
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    try:
        with open(fd, mode, **open_args) as fh:
            yield fh
        os.chmod(temporary, 0o666 & ~_umask())  # as open() would have made it: mkstemp's file is the owner's alone
        os.replace(temporary, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(temporary)
        if isinstance(e, OSError) and e.errno in WRITE_FAILURES:
            raise PerfError(f"cannot write {path} ({e.strerror}); it is left as it was") from None
        raise


def write_text(path, text: str) -> None:
    """`path` replaced by `text` whole."""
    with replacing_file(path) as fh:
        fh.write(text)


@contextlib.contextmanager
def replacing_folder(path, last: str = ""):
    """A temporary folder beside `path` whose files move into `path` when the block ends without an exception.

    A new `path` is the temporary folder renamed. An existing one keeps its other
    files and receives the new ones by one rename each, the file named `last`
    (the one that says the rest is complete, a report) after the others; a run
    interrupted while writing leaves it untouched. Of two runs into the same
    folder, the files of the one that finishes last win.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = Path(tempfile.mkdtemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial"))
    os.chmod(temporary, 0o777 & ~_umask())  # a folder made by mkdtemp is the owner's alone
    try:
        yield temporary
        written = sorted(temporary.iterdir(), key=lambda p: p.name == last)
        try:
            temporary.rename(path)  # fails where path exists (or another run just created it)
        except OSError:
            path.mkdir(exist_ok=True)
            for file in written:
                os.replace(file, path / file.name)
    finally:
        shutil.rmtree(temporary, ignore_errors=True)
