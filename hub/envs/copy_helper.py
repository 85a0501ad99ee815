"""``run_split``: a big copy split between the calling thread and one helper thread.

A rollout stacks its steps when its env is idle: EnvPool's threads wait for the next action,
a ParallelEnv's workers for the next command. A second core is then free, and numpy's copies
release the GIL, so half of a big stack can go to a helper thread. Measured in place on the
2-core machine (Pong, 8 envs, 100-step rollouts: two stacks of 22.6 MB each): 120 us of
stacking per batch step in one thread, 72 us split in two.

torch's intra-op pool is not used for this (see :mod:`hub.envs.serial_ops`): its threads spin
after each parallel region and take the cores from the env's threads. The helper sleeps on a
queue between copies, and is started at its first use only.

Example:
    >>> import numpy as np
    >>> a, b = np.zeros(4), np.zeros(4)
    >>> run_split(lambda: a.fill(1), lambda: b.fill(2))
    >>> a.tolist(), b.tolist()
    ([1.0, 1.0, 1.0, 1.0], [2.0, 2.0, 2.0, 2.0])
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable

__all__ = ["run_split"]

Job = Callable[[], None]


class _Helper:
    """One daemon thread running the second half of :func:`run_split`'s copies."""

    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.busy = threading.Lock()  # one split at a time; a concurrent caller copies alone
        self.thread: threading.Thread | None = None

    def _serve(self) -> None:
        while True:
            job, finished, errors = self.jobs.get()
            try:
                job()
            except BaseException as exc:  # noqa: BLE001 - raised again in the caller
                errors.append(exc)
            finally:
                finished.set()

    def run(self, first: Job, second: Job) -> bool:
        """Run ``second`` in the helper thread and ``first`` in the calling thread; ``False``
        (nothing run) when another thread is using the helper."""
        if not self.busy.acquire(blocking=False):
            return False
        try:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._serve, name="hub-copy", daemon=True)
                self.thread.start()
            finished, errors = threading.Event(), []
            self.jobs.put((second, finished, errors))
            try:
                first()
            finally:
                finished.wait()  # the helper writes into memory the caller owns
            if errors:
                raise errors[0]
        finally:
            self.busy.release()
        return True


_HELPER = _Helper()


def _forget_helper() -> None:
    """In a forked child: the helper thread does not exist there, and its lock or queue may
    have been copied mid-use."""
    global _HELPER
    _HELPER = _Helper()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_helper)


def run_split(first: Job, second: Job) -> None:
    """Run ``first`` in the calling thread and ``second`` at the same time in the helper
    thread (both in the calling thread when the helper is in use by another thread); returns
    when both are done, raising what either raised."""
    if not _HELPER.run(first, second):
        first()
        second()
