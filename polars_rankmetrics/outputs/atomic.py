"""Crash-safe writes: every file the library writes for its user (a state, an HTML page, the
command's ``--output``) is written beside its target under a temporary name, made durable
(fsync), renamed over the target (:func:`os.replace`, atomic within a directory), and the
directory made durable too. A reader, a crash or a second writer then sees
no file, the old one, or a whole new one, never a part.

A writer killed before its rename (SIGKILL, a power cut) leaves its temporary file,
``.NAME.tmp-XXXXXXXX`` beside ``NAME`` (hidden, and matched by no ``*.parquet`` glob): it holds
an unfinished write and can be deleted. Any other failure removes it.

The engines' spill files (buckets, per-sample parts, a TREC file's keys) are not written this
way: they live in the run's own temporary directory, are read back by that run alone and are
removed with it, so a flush to the disk would slow the out-of-core path and protect nothing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
from collections.abc import Iterator
from pathlib import Path

# What a filesystem that cannot fsync a directory answers (some network and FUSE filesystems):
# the rename is done by then, so the file is written.
_NO_DIRECTORY_FSYNC = frozenset({errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP})

# What names a temporary file: ``.NAME`` + this + random hex digits, beside ``NAME``.
TEMPORARY_MARK = ".tmp-"


@contextlib.contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Write a file at ``path`` whole or not at all: yields a temporary path beside it to write
    (by any writer: Python, Polars, an engine's ``COPY ... TO``), then makes it durable and
    renames it over ``path``.

    Parameters
    ----------
    path
        The file to write. Its directory must exist. A symbolic link is kept: the file it
        points to is replaced. A file replaced keeps its permission bits; a new one gets the
        process's default (the umask's).

    Yields
    ------
    Path
        ``.NAME.tmp-XXXXXXXX`` in ``path``'s directory, created empty (the name is reserved:
        two writers never share one); the writer may overwrite it.

    Raises
    ------
    OSError
        The directory is missing or not writable (the error names ``path``), the disk is full,
        or ``path`` is a directory. The temporary file is removed on any failure, the writer's
        included (an exception or a signal raised as one), and ``path`` is left as it was.

    Notes
    -----
    Two writers of one path each rename their own whole file: the last rename wins. Only a
    killed process (SIGKILL) leaves its temporary file behind.
    """
    target = Path(os.path.realpath(path))
    temporary = _named(target)
    # Created inside the try: an exception (a signal raised as one) right after the creation
    # still removes the file.
    try:
        while not _created(temporary, shown=os.fspath(path)):
            temporary = _named(target)
        yield temporary
        _fsync(temporary)
        with contextlib.suppress(FileNotFoundError):
            os.chmod(temporary, os.stat(target).st_mode & 0o7777)
        _replace(temporary, target, shown=os.fspath(path))
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    _fsync_directory(target.parent)


def write_text(path: str | os.PathLike[str], text: str) -> None:
    """Write ``text`` (UTF-8) at ``path`` through :func:`replacing`: whole or not at all.

    Parameters
    ----------
    path
        The file to write, in a directory that exists.
    text
        What it holds, written as given (no newline added).

    Raises
    ------
    OSError
        As :func:`replacing` raises it; ``path`` is then left as it was.
    """
    with replacing(path) as temporary, open(temporary, "w", encoding="utf-8") as out:
        out.write(text)


def _named(target: Path) -> Path:
    """A temporary name beside ``target``: ``.NAME.tmp-`` and eight random hex digits."""
    return target.with_name(f".{target.name}{TEMPORARY_MARK}{secrets.token_hex(4)}")


def _created(temporary: Path, shown: str) -> bool:
    """Create ``temporary``, empty; False where another writer holds the name."""
    try:
        os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    except FileExistsError:
        return False
    except OSError as error:
        error.filename = shown  # the user's file, not the temporary name
        raise
    return True


def _replace(temporary: Path, target: Path, shown: str) -> None:
    """Rename ``temporary`` over ``target`` (``target`` a directory: IsADirectoryError, naming
    the user's path alone)."""
    try:
        os.replace(temporary, target)
    except OSError as error:
        raise type(error)(error.errno, error.strerror, shown) from error


def _fsync(path: Path) -> None:
    """The file's data on the disk, whichever writer wrote it (the writer's buffers flushed by
    its close)."""
    handle = os.open(path, os.O_RDWR)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)


def _fsync_directory(directory: Path) -> None:
    """The rename on the disk. POSIX only: Windows opens no directory to fsync. A filesystem
    that refuses fsync on a directory (EINVAL, ENOTSUP) leaves the rename as durable as it
    makes it: the file is written, and no error is raised."""
    if os.name != "posix":
        return
    handle = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(handle)
    except OSError as error:
        if error.errno not in _NO_DIRECTORY_FSYNC:
            raise
    finally:
        os.close(handle)
