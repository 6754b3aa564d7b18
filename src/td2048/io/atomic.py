"""Atomic writes: a reader (or a crash) sees the old file or the new one, never half of one."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

from td2048.errors import TD2048Error


@contextlib.contextmanager
def atomic_open(path: str | os.PathLike, mode: str = "wb"):
    """Open a temp file beside ``path``; on success fsync it and rename it over ``path``."""
    path = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as e:
        raise TD2048Error(f"cannot write {path}: {e.strerror}") from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; a saved file gets the usual permissions
        with os.fdopen(fd, mode) as f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        if isinstance(e, OSError):
            raise TD2048Error(f"cannot write {path}: {e.strerror or e}") from None
        raise


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    with atomic_open(path, "w") as f:
        f.write(text)


def ensure_writable_dir(path: str | os.PathLike) -> Path:
    """Create ``path`` if needed and prove it takes files; a clear error otherwise."""
    path = Path(path)
    try:
        path.mkdir(parents=True, exist_ok=True)
        fd, probe = tempfile.mkstemp(prefix=".td2048-probe-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as e:
        raise TD2048Error(f"cannot write to directory {path}: {e.strerror or e}") from None
    return path
