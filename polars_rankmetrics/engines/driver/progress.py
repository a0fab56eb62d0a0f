"""Progress: ``progress(done, total)`` after each step of a run, and within a step from the
engine's own estimate where it has one."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from polars_rankmetrics.engines.base import Progress, Session

_POLL_SECONDS = 0.5


class Reporter:
    """Reports ``progress(done, total)`` after each step, and within a step from the session's
    ``query_progress()`` (polled every :data:`_POLL_SECONDS`) where the engine can tell."""

    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total = progress, total

    @contextmanager
    def step(self, index: int, session: Session) -> Iterator[None]:
        if self.progress is None:
            yield
            return
        report, stop = self.progress, threading.Event()

        def poll() -> None:
            while not stop.wait(_POLL_SECONDS):
                share = session.query_progress()
                if share is not None:
                    report(index + min(max(share, 0.0), 1.0), self.total)

        watcher = threading.Thread(target=poll, daemon=True)
        watcher.start()
        try:
            yield
        finally:
            stop.set()
            watcher.join()
        report(index + 1, self.total)
