"""The directory each run's spill and bucket files live in, and the removal of those that killed
runs left behind.

A run's directory is ``rankmetrics-<pid>-*`` under ``temp_dir`` (the system's temporary
directory by default), removed when the run ends however it ends; one left by a process that no
longer runs is removed when a later run starts (a process looks in a directory at most once every
:data:`_SWEEP` seconds).
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

_PREFIX = "rankmetrics-"
_OWNED = re.compile(rf"^{_PREFIX}([0-9]+)-")
# After an engine's failure, the removal is repeated until the directory has stayed absent for
# _SETTLED seconds, for at most _SETTLING seconds (polling every _POLL).
_SETTLED, _SETTLING, _POLL = 0.3, 3.0, 0.05
# The listing of a system's temporary directory (hundreds of entries) costs an evaluation of a
# small table a tenth of its time: a process looks for stale directories in a parent at most
# once every _SWEEP seconds (_swept: when it last looked, per parent).
_SWEEP = 60.0
_swept: dict[Path, float] = {}


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale(parent: Path) -> None:
    """Remove the directories of ``parent`` that runs of processes no longer alive left. (The
    names are matched as the system lists them, before any other call per entry.)"""
    with os.scandir(parent) as entries:
        for entry in entries:
            owner = entry.name.startswith(_PREFIX) and _OWNED.match(entry.name)
            if owner and entry.is_dir() and not _running(int(owner.group(1))):
                shutil.rmtree(entry.path, ignore_errors=True)


@contextmanager
def managed_directory(temp_dir: str | os.PathLike[str] | None) -> Iterator[Path]:
    """A new directory for this run's spill and bucket files, removed when the block ends."""
    parent = Path(temp_dir) if temp_dir is not None else Path(tempfile.gettempdir())
    if not parent.is_dir():
        raise ValueError(f"temp_dir {str(parent)!r} is not a directory")
    last, now = _swept.get(parent), time.monotonic()
    if last is None or now - last >= _SWEEP:
        _swept[parent] = now
        remove_stale(parent)
    path = Path(tempfile.mkdtemp(prefix=f"{_PREFIX}{os.getpid()}-", dir=parent))
    try:
        yield path
    except ValueError:  # the checks refused the input: no engine is writing
        _remove(path)
        raise
    except BaseException:  # an engine's or the system's error, or an interrupt
        _remove(path, settle=True)
        raise
    _remove(path)


def _remove(path: Path, *, settle: bool = False) -> None:
    """Remove ``path`` and everything under it. After an engine's failure (``settle``), its
    writer threads may still finish or start a file as the error arrives (a full disk fails one
    partition of a sink while the others write, creating their directories), so the removal is
    repeated until the directory has stayed absent for a while (:data:`_SETTLED`)."""
    if not settle:
        try:
            path.rmdir()  # empty, as a run in one piece leaves it: one call
            return
        except OSError:
            pass
    absent_since = None
    for _ in range(round(_SETTLING / _POLL) if settle else 1):
        shutil.rmtree(path, ignore_errors=True)
        now = time.monotonic()
        if path.exists():
            absent_since = None
        elif absent_since is None:
            absent_since = now
        if not settle or (absent_since is not None and now - absent_since >= _SETTLED):
            return
        time.sleep(_POLL)
