"""``call_within``: bound a call made in this process, for ``SerialEnv(timeout=...)``.

A sub-env of a ``SerialEnv`` runs in the calling thread, so nothing can kill it; what can be
done is to interrupt it. :func:`call_within` arms ``SIGALRM`` (``setitimer``) for the call; when
it fires, its handler raises :class:`hub.errors.WorkerTimeoutError` in the main thread, where
the sub-env runs. That interrupts a sub-env running Python code or waiting in a system call
(``time.sleep``, a socket, a pipe, a lock): Python runs signal handlers between bytecodes and
when a system call is interrupted. It cannot interrupt native code that never returns to the
interpreter (a C loop that makes no system call): use ``ParallelEnv``, whose ``timeout`` kills
the worker process, for envs that may hang there.

The alarm is the process's only one: a timer armed before (pytest-timeout's, say) is put back
with its remaining time afterwards, and fires through its own handler if it is due first. In a
thread other than the main one no signal can be delivered to the call, and ``SerialEnv`` raises
a clear error instead of not bounding it.

Example:
    >>> call_within(1.0, "sub-env 0", "step", lambda: 42)
    42
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from hub.errors import HubError, WorkerTimeoutError

__all__ = ["call_within", "can_bound_calls"]

T = TypeVar("T")


def can_bound_calls() -> bool:
    """Whether :func:`call_within` can bound a call made from this thread."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


def call_within(
    seconds: float | None,
    who: str | Callable[[], tuple[str, int | None]],
    what: str,
    fn: Callable[..., T],
    *args: Any,
) -> T:
    """``fn(*args)``, interrupted with :class:`hub.errors.WorkerTimeoutError` after ``seconds``
    (``None``: not bounded). ``who`` names what runs (``"sub-env 0"``), or is a function that
    returns ``(name, index)`` at the moment the time is up (the index goes to the error's
    ``worker``)."""
    if seconds is None:
        return fn(*args)
    if not can_bound_calls():
        name = who()[0] if callable(who) else who
        raise HubError(
            f"a timeout of {seconds} s cannot bound {name}'s {what} in this thread: in-process "
            "calls are interrupted with SIGALRM, which only the main thread receives. Call the "
            "env from the main thread, use ParallelEnv (its timeout kills the worker), or "
            "pass timeout=None."
        )
    start = time.monotonic()
    due = start + seconds
    outer_delay, outer_interval = signal.getitimer(signal.ITIMER_REAL)
    outer_due = start + outer_delay if outer_delay > 0 else None
    outer_handler = signal.getsignal(signal.SIGALRM)
    outer_fired = []

    def expired(signum: int, frame: Any) -> None:
        now = time.monotonic()
        if outer_due is not None and not outer_fired and now >= outer_due:
            outer_fired.append(True)  # the outer timer was due first: its handler acts
            if callable(outer_handler):
                outer_handler(signum, frame)
        if now < due:
            signal.setitimer(signal.ITIMER_REAL, due - now)
            return
        name, index = who() if callable(who) else (who, None)
        raise WorkerTimeoutError(
            f"{name} did not return from {what} within {seconds} s and was interrupted; its "
            "state is not known now: reset the env (env.reset()) before stepping again, or "
            "close it. A sub-env that may hang in native code needs ParallelEnv, whose "
            "timeout kills the worker process.",
            worker=index,
        )

    signal.signal(signal.SIGALRM, expired)
    signal.setitimer(
        signal.ITIMER_REAL, seconds if outer_due is None else min(seconds, outer_delay)
    )
    try:
        return fn(*args)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, outer_handler)
        if outer_due is not None and (not outer_fired or outer_interval):
            left = max(outer_due - time.monotonic(), 1e-6) if not outer_fired else outer_interval
            signal.setitimer(signal.ITIMER_REAL, left, outer_interval)
