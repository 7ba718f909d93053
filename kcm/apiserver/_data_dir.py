"""The data directory: one process at a time, readable by its owner only.

Two servers on one SQLite store would each hand out the same resourceVersions and never see
each other's writes, so whoever opens a data directory holds an exclusive ``flock`` on
``<data-dir>/kcm.lock`` (with its pid inside, for the error the next one gets) until it closes
it. The kernel drops the lock when the process dies, so a crash never leaves a stale lock.

Files are created with their final mode (``os.open(..., 0o600)``), never written first and
tightened after: there is no moment another local user could open them.
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
import tempfile
from pathlib import Path

__all__ = ["DataDirLock", "DataDirLocked", "create_private", "private_dir", "write_private"]

log = logging.getLogger(__name__)

LOCK_FILE = "kcm.lock"


class DataDirLocked(RuntimeError):
    """Another live process holds the data directory.

    Attributes:
        path: the data directory.
        pid: the holder's process id, when it could be read from the lock file.
    """

    def __init__(self, path: Path, pid: int | None, hint: str = "") -> None:
        holder = f"process {pid}" if pid else "another process"
        message = f"the data directory {path} is in use by {holder} (it holds {path / LOCK_FILE})"
        super().__init__(message + (f"; {hint}" if hint else ""))
        self.path = path
        self.pid = pid


def private_dir(path: Path, *, warn: bool = True) -> None:
    """Create ``path`` (and missing parents) mode 0700.

    An existing directory keeps its mode (it may be shared on purpose, ``--data-dir /tmp/x``
    under a group's directory): kcm's files inside are 0600 whatever it is, and a warning says
    when the directory itself is open to others.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        path.mkdir(mode=0o700)
    except FileExistsError:
        mode = stat.S_IMODE(path.stat().st_mode)
        if warn and mode & 0o077:
            log.warning(
                "data directory %s is mode %04o: other users can list it (its files are 0600)",
                path,
                mode,
            )


def create_private(path: Path) -> None:
    """Make sure ``path`` exists as a 0600 file: created so, or tightened if it was looser."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        _tighten(fd)
    finally:
        os.close(fd)


def _tighten(fd: int) -> None:
    if stat.S_IMODE(os.fstat(fd).st_mode) & 0o077:
        os.fchmod(fd, 0o600)


def write_private(path: Path, data: bytes) -> None:
    """Replace ``path`` with ``data`` atomically; the file is 0600 from its first byte (a
    ``mkstemp`` file in the same directory, renamed over the target)."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class DataDirLock:
    """The exclusive hold on a data directory (created 0700 if missing).

    Raises:
        DataDirLocked: another process holds it.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        private_dir(self.path)
        self._fd: int | None = os.open(self.path / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            _tighten(self._fd)
            self._lock(self._fd)
        except BaseException:
            os.close(self._fd)
            self._fd = None
            raise

    def _lock(self, fd: int) -> None:
        try:
            import fcntl
        except ImportError:  # not POSIX: no lock
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise DataDirLocked(self.path, _read_pid(fd)) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)

    def release(self) -> None:
        """Let the next process in (closing the file drops the flock). Idempotent."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            os.close(fd)

    def __enter__(self) -> DataDirLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip())
    except (OSError, ValueError):
        return None
