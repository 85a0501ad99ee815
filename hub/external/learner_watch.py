"""Noticing at once that the learner's thread ended, so that no simulator waits for it in vain.

The learner side of an :class:`~hub.external.ExternalEnv` (``reset``, ``step``, ``poll``,
``send_actions``) runs in some thread of the learner's process. :class:`LearnerWatch` remembers
the last thread that made such a call; a daemon thread joins it and reports its end (a learner
that raised and died), unless another thread has made a learner call since. The process's main
thread is not watched: when it ends, the process does.

Example:
    >>> import threading
    >>> gone = []
    >>> watch = LearnerWatch(gone.append)
    >>> learner = threading.Thread(target=watch.touch)
    >>> learner.start(); learner.join()
    >>> watch.wait_reported(5.0)
    True
    >>> gone == [learner]
    True
    >>> watch.stop()
"""

from __future__ import annotations

import threading
from collections.abc import Callable

__all__ = ["LearnerWatch"]

_POLL_S = 0.05  # how often the watcher looks whether it was stopped


class LearnerWatch:
    """Calls ``on_gone(thread)`` when the thread of the last learner call ends."""

    def __init__(self, on_gone: Callable[[threading.Thread], None]) -> None:
        self._on_gone = on_gone
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._reported = threading.Event()
        self._watcher: threading.Thread | None = None
        self._stopped = False

    def touch(self) -> None:
        """Mark the calling thread as the learner's (cheap when it already is)."""
        thread = threading.current_thread()
        if thread is self._thread:
            return
        with self._lock:
            if self._stopped:
                return
            self._thread = thread
            self._reported.clear()
            self._changed.set()
            if self._watcher is None and thread is not threading.main_thread():
                self._watcher = threading.Thread(
                    target=self._watch, name="hub-external-learner-watch", daemon=True
                )
                self._watcher.start()

    def _watch(self) -> None:
        while True:
            self._changed.wait()
            with self._lock:
                if self._stopped:
                    return
                self._changed.clear()
                thread = self._thread
            if thread is None or thread is threading.main_thread():
                continue
            while thread.is_alive() and not self._stopped:
                thread.join(_POLL_S)  # returns as soon as the thread ends
            with self._lock:
                if self._stopped:
                    return
                if self._thread is not thread:  # a newer learner thread took over
                    continue
            self._on_gone(thread)
            self._reported.set()

    def wait_reported(self, timeout: float | None = None) -> bool:
        """Wait until the end of a learner thread was reported (tests)."""
        return self._reported.wait(timeout)

    def stop(self) -> None:
        """Stop watching (the env was closed) and wait for the watcher thread to end."""
        with self._lock:
            self._stopped = True
            self._changed.set()
            watcher = self._watcher
        if watcher is not None and watcher is not threading.current_thread():
            watcher.join()
