"""Signalling between a ``ParallelEnv`` and its workers: one-byte messages over OS pipes.

Each worker has two one-way pipes: commands (parent -> worker) and answers (worker -> parent).
A step or a reset is one byte each way; the data itself sits in shared memory. Rare control
messages (seeding, attribute access, ``call``, errors) follow their byte as a length-prefixed
pickle, between this process and the children it started (never a network peer).

Why pipes: on the 2-core machine they matched POSIX semaphores and ``eventfd`` in round-trip
time, beat duplex ``Connection`` objects and ``multiprocessing.Event`` by 2-10x, and spinning on
a shared flag was hundreds of times slower (a spinning process holds a core the workers need;
``benchmarks/bench_batching.py --signals``, figures in ``docs/batching.md``). A pipe also reports a dead
peer by itself: when a worker dies its end closes and ``poll`` wakes the parent with an EOF, so a
crash is noticed at once, without polling for it.

Waking a process that sleeps in ``poll`` is what a round trip costs, though (tens of
microseconds each way on a virtual machine). So a waiting process first polls without sleeping
for a short while, giving its core away between polls (:func:`spin_poll`), and sleeps only when
nothing came: a step's answer, or the next command of a loop that steps at once, is then picked up
without a wake-up, and the sender's ``write`` does not have to wake anyone either.

Example:
    >>> parent, child = channel_pair()
    >>> parent.send(STEP)
    >>> child.recv_op(timeout=1.0) == STEP
    True
    >>> child.reply(OK)
    >>> parent.read_status()
    b'k'
    >>> parent.close(); child.close()
"""

from __future__ import annotations

import math
import os
import pickle
import select
import struct
import threading
import time
from multiprocessing import connection
from multiprocessing.context import BaseContext
from typing import Any

__all__ = [
    "ParentChannel",
    "WorkerChannel",
    "channel_pair",
    "wait_for",
    "spin_poll",
    "Spinner",
    "Waiter",
    "parent_side_fds",
    "forget_inherited_fds",
    "ping_answer",
    "STEP",
    "STEP_ROWS",
    "STEP_RESET",
    "STEP_RESET_ROWS",
    "RESET",
    "RESET_ROWS",
    "STEP_ASYNC",
    "RESET_ASYNC",
    "CONTROL",
    "CLOSE",
    "OK",
    "DID_RESET",
    "VALUE",
    "ERROR",
    "WITH_ENTRIES",
]

# commands (parent -> worker)
STEP = b"s"  # step every sub-env of the worker with the inputs in shared memory
STEP_ROWS = b"t"  # step the sub-envs whose "rows" flag is set
STEP_RESET = b"S"  # step, then reset the sub-envs whose episode ended
STEP_RESET_ROWS = b"T"  # the same for the sub-envs whose "rows" flag is set
RESET = b"R"  # reset every sub-env of the worker
RESET_ROWS = b"P"  # reset the sub-envs whose "rows" flag is set
STEP_ASYNC = b"a"  # first-ready async: restart the sub-envs that ended, step the others
RESET_ASYNC = b"A"  # first-ready async: reset every sub-env, written as step rows
CONTROL = b"c"  # a pickled (operation, arguments) follows
CLOSE = b"q"

# answers (worker -> parent)
OK = b"k"
DID_RESET = b"r"  # STEP_RESET: the worker also reset some sub-envs
VALUE = b"v"  # a pickled value follows
ERROR = b"e"  # a pickled (type name, message, traceback) follows
# a step or reset that also gave entries shared memory cannot hold (strings, objects): a pickled
# (status, {group: {key: one value per sub-env}}) follows, status being OK or DID_RESET
WITH_ENTRIES = b"n"

# every parent-side pipe end of every ParallelEnv, with the pid of the process that owns it: a
# worker started with fork closes its parent's, so that only the parent holds them (a dead parent
# then means EOF for its workers). Entries inherited from another process are stale, not ours.
_PARENT_FDS: dict[int, int] = {}
_FDS_LOCK = threading.Lock()


def parent_side_fds() -> list[int]:
    """The pipe ends that parents in this process hold (closed in forked workers)."""
    pid = os.getpid()
    with _FDS_LOCK:
        return sorted(fd for fd, owner in _PARENT_FDS.items() if owner == pid)


def forget_inherited_fds() -> None:
    """Drop the entries a forked worker inherited (their fds are closed or reused here)."""
    with _FDS_LOCK:
        _PARENT_FDS.clear()


class ParentChannel:
    """The parent's ends of one worker's pipes."""

    def __init__(self, cmd: connection.Connection, ack: connection.Connection) -> None:
        self._cmd = cmd
        self._ack = ack
        self.cmd_fd = cmd.fileno()
        self.ack_fd = ack.fileno()
        pid = os.getpid()
        with _FDS_LOCK:
            _PARENT_FDS.update({self.cmd_fd: pid, self.ack_fd: pid})

    def send(self, op: bytes) -> None:
        """Send a one-byte command (raises ``BrokenPipeError`` when the worker is gone)."""
        os.write(self.cmd_fd, op)

    def send_control(self, operation: str, payload: Any = None) -> None:
        """Send a control command with a pickled ``(operation, payload)``: the command byte, the
        length and the pickle in one write (a ``KeyboardInterrupt`` cannot fall between them;
        what ``Connection.recv_bytes`` reads on the other side)."""
        data = pickle.dumps((operation, payload), protocol=pickle.HIGHEST_PROTOCOL)
        _write_all(self.cmd_fd, CONTROL + struct.pack("!i", len(data)) + data)

    def read_raw(self) -> bytes:
        """Whatever the worker wrote and was not read yet (``b""`` when it died)."""
        return os.read(self.ack_fd, 65536)

    def read_status(self) -> bytes:
        """Read one answer byte (``b""`` when the worker's end is closed: it died)."""
        return os.read(self.ack_fd, 1)

    def read_payload(self) -> Any:
        """Read the pickle that follows a ``VALUE`` or ``ERROR`` byte."""
        return pickle.loads(self._ack.recv_bytes())

    def close(self) -> None:
        with _FDS_LOCK:
            for fd in (self.cmd_fd, self.ack_fd):
                if _PARENT_FDS.get(fd) == os.getpid():
                    del _PARENT_FDS[fd]
        for conn in (self._cmd, self._ack):
            try:
                conn.close()
            except OSError:
                pass


class WorkerChannel:
    """The worker's ends of its pipes (picklable for every start method)."""

    def __init__(self, cmd: connection.Connection, ack: connection.Connection) -> None:
        self._cmd = cmd
        self._ack = ack
        self._poll: Any = None

    def fds(self) -> tuple[int, int]:
        """``(command fd, answer fd)``: for a loop that reads and writes them directly."""
        return self._cmd.fileno(), self._ack.fileno()

    def recv_op(self, timeout: float | None) -> bytes | None:
        """Wait for a command byte; ``None`` when ``timeout`` passed, ``b""`` at EOF."""
        fd = self._cmd.fileno()
        if self._poll is None:
            self._poll = select.poll()
            self._poll.register(fd, select.POLLIN)
        if not self._poll.poll(None if timeout is None else int(timeout * 1000)):
            return None
        return os.read(fd, 1)

    def recv_control(self) -> tuple[str, Any]:
        """Read the pickled ``(operation, payload)`` that follows a ``CONTROL`` byte."""
        return pickle.loads(self._cmd.recv_bytes())

    def reply(self, status: bytes) -> None:
        os.write(self._ack.fileno(), status)

    def reply_payload(self, status: bytes, payload: Any) -> None:
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        os.write(self._ack.fileno(), status)
        self._ack.send_bytes(data)

    def close(self) -> None:
        for conn in (self._cmd, self._ack):
            try:
                conn.close()
            except OSError:
                pass


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def ping_answer(token: bytes) -> bytes:
    """The exact bytes a worker answers to ``send_control("ping", token)``."""
    data = pickle.dumps(token, protocol=pickle.HIGHEST_PROTOCOL)
    return VALUE + struct.pack("!i", len(data)) + data


def channel_pair(ctx: BaseContext | None = None) -> tuple[ParentChannel, WorkerChannel]:
    """Two one-way pipes; the parent keeps one end of each, the worker gets the others."""
    if ctx is None:
        cmd_r, cmd_w = connection.Pipe(duplex=False)
        ack_r, ack_w = connection.Pipe(duplex=False)
    else:
        cmd_r, cmd_w = ctx.Pipe(duplex=False)
        ack_r, ack_w = ctx.Pipe(duplex=False)
    return ParentChannel(cmd_w, ack_r), WorkerChannel(cmd_r, ack_w)


class Waiter:
    """Waits on a set of fds; each fd leaves the set once it has been reported ready."""

    def __init__(self, fds: list[int]) -> None:
        self._poll = select.poll()
        self._fds = set(fds)
        for fd in fds:
            self._poll.register(fd, select.POLLIN)

    def wait(self, timeout: float | None) -> list[int]:
        """The fds that became readable (or closed) within ``timeout`` seconds ([] on timeout)."""
        ms = None if timeout is None else max(math.ceil(timeout * 1000), 0)
        ready = [fd for fd, _ in self._poll.poll(ms)]
        for fd in ready:
            self.drop(fd)
        return ready

    def drop(self, fd: int) -> None:
        if fd in self._fds:
            self._fds.discard(fd)
            self._poll.unregister(fd)


def wait_for(fds: list[int], timeout: float | None) -> list[int]:
    """The fds among ``fds`` that are readable (or closed) within ``timeout`` seconds.

    Returns an empty list on timeout. ``timeout=None`` waits until one is ready.
    """
    poller = select.poll()
    for fd in fds:
        poller.register(fd, select.POLLIN)
    ms = None if timeout is None else max(math.ceil(timeout * 1000), 0)
    return [fd for fd, _ in poller.poll(ms)]


_yield = getattr(os, "sched_yield", lambda: time.sleep(0))


def spin_poll(poller: Any, seconds: float) -> bool:
    """Poll ``poller`` without sleeping for up to ``seconds``, yielding the core between polls
    (to the processes being waited for, on a machine with fewer cores than processes).

    Returns ``True`` as soon as something is ready (data, or a closed end), ``False`` when
    ``seconds`` passed first: the caller then sleeps in a blocking ``poll``.

    Example:
        >>> parent, child = channel_pair()
        >>> poller = select.poll()
        >>> poller.register(child.fds()[0], select.POLLIN)
        >>> spin_poll(poller, 0.0001)
        False
        >>> parent.send(STEP)
        >>> spin_poll(poller, 0.0001)
        True
        >>> parent.close(); child.close()
    """
    if poller.poll(0):
        return True
    clock = time.perf_counter
    end = clock() + seconds
    poll = poller.poll
    while clock() < end:
        _yield()
        if poll(0):
            return True
    return False


class Spinner:
    """:func:`spin_poll` for a process that waits again and again: it spins only while its
    waits are short.

    It keeps a running average of how long its waits took (spinning and sleeping alike); when
    that average exceeds ``seconds`` (a slow env, a policy that thinks between steps), spinning
    would mostly burn CPU before sleeping anyway, so it sleeps at once until the waits get short
    again. Call :meth:`poll` when a wait starts and :meth:`done` when it ended.

    Example:
        >>> parent, child = channel_pair()
        >>> poller = select.poll()
        >>> poller.register(child.fds()[0], select.POLLIN)
        >>> spinner = Spinner(0.0001)
        >>> parent.send(STEP)
        >>> spinner.poll(poller)
        True
        >>> spinner.done()
        >>> child.recv_op(timeout=0) == STEP
        True
        >>> spinner.typical = 1.0  # as after long waits: it sleeps at once
        >>> spinner.poll(poller)
        False
        >>> parent.close(); child.close()
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.typical = 0.0  # running average of the last waits, in seconds
        self._started = 0.0

    def poll(self, poller: Any) -> bool:
        """Start a wait: ``True`` when ``poller`` became ready while spinning; ``False``: sleep
        in a blocking ``poll``, which returns at once if something is ready (then call
        :meth:`done` all the same)."""
        self._started = time.perf_counter()
        if self.seconds <= 0 or self.typical > self.seconds:
            return False  # no poll(0) first: the caller's blocking poll would repeat it
        return spin_poll(poller, self.seconds)

    def done(self) -> None:
        """End the wait started by :meth:`poll` (updates the running average)."""
        self.typical += 0.25 * (time.perf_counter() - self._started - self.typical)
