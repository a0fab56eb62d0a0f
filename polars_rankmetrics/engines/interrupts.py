"""Stopping the engines' running queries when the process gets a signal (Ctrl-C, SIGTERM).

Python runs a signal handler only between bytecodes of the main thread, so a long query inside
an engine (DuckDB executing one statement) would hold the handler back until it finishes. While
:func:`watching` is active, a thread waits on the signal wake-up file descriptor, which the
interpreter writes at once from its low-level handler, and calls every stopper that an open
session registered with :func:`stopping` (DuckDB: ``connection.interrupt()``). The query then
fails in the main thread, where the Python handler runs next and unwinds the run as usual.
"""

from __future__ import annotations

import signal
import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

_STOPPERS: set[Callable[[], None]] = set()


@contextmanager
def stopping(stopper: Callable[[], None]) -> Iterator[None]:
    """Call ``stopper`` (from another thread) if a signal arrives while the block runs."""
    _STOPPERS.add(stopper)
    try:
        yield
    finally:
        _STOPPERS.discard(stopper)


@contextmanager
def watching() -> Iterator[None]:
    """Run the registered stoppers on every signal that has a Python handler, while the block
    runs. Call from the main thread, with the handlers installed."""
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    previous = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)

    def watch() -> None:
        while reader.recv(64):  # empty: the writer closed, the block is over
            for stopper in list(_STOPPERS):
                stopper()

    watcher = threading.Thread(target=watch, name="rankmetrics-signals", daemon=True)
    watcher.start()
    try:
        yield
    finally:
        signal.set_wakeup_fd(previous)
        writer.close()
        watcher.join()
        reader.close()
