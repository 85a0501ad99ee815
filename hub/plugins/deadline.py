"""Running a plugin's code with a deadline, so that a plugin that hangs cannot hang hub.

:func:`call_with_deadline` runs a function in a daemon thread and waits for it at most
``timeout`` seconds. When the deadline passes, the caller gets an :class:`Outcome` with
``timed_out`` set and the stack where the thread was stuck; whatever the function does after
that is never handed back (a late result is dropped), so the caller decides alone what to
register. The thread itself cannot be stopped: it stays blocked in the background until the
process exits, which is why plugins are only ever run this way for code that should return at
once (imports and the registration hooks).

Code running in such a thread sees :func:`in_loader_thread` true: the plugin manager uses it to
answer a plugin that asks for the plugins while they load, instead of waiting for itself.

Whatever the function raises in its thread is its own doing, ``KeyboardInterrupt`` included:
a signal (the user's Ctrl-C) is delivered to the main thread, which is waiting in ``join`` and
gets it there, as any waiting code would.

Example:
    >>> outcome = call_with_deadline(lambda: 42, timeout=5.0, name="toy")
    >>> (outcome.value, outcome.timed_out, outcome.error)
    (42, False, None)
    >>> call_with_deadline(lambda: 1 / 0, timeout=None, name="toy").error
    ZeroDivisionError('division by zero')
"""

from __future__ import annotations

import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Outcome", "call_with_deadline", "in_loader_thread", "THREAD_PREFIX"]

#: Threads that run plugin code are named ``"hub-plugin-load:<plugin name>"``.
THREAD_PREFIX = "hub-plugin-load:"

_local = threading.local()


def in_loader_thread() -> bool:
    """Whether the calling code runs inside :func:`call_with_deadline` (in its thread or inline).

    Example:
        >>> in_loader_thread()
        False
        >>> call_with_deadline(in_loader_thread, timeout=5.0, name="toy").value
        True
    """
    return getattr(_local, "depth", 0) > 0


@dataclass
class Outcome:
    """What a call with a deadline came to.

    Attributes:
        value: what the function returned (``None`` if it raised or timed out).
        error: the exception it raised, or ``None``.
        traceback: the formatted traceback of ``error``, or, when it timed out, the stack of
            the thread at the deadline.
        timed_out: the deadline passed before the function returned.
        seconds: how long the caller waited.
    """

    value: Any = None
    error: BaseException | None = None
    traceback: str | None = None
    timed_out: bool = False
    seconds: float = 0.0


def _run(fn: Callable[[], Any], outcome: Outcome) -> None:
    _local.depth = getattr(_local, "depth", 0) + 1
    try:
        outcome.value = fn()
    except BaseException as exc:  # noqa: BLE001 - a plugin may raise anything, SystemExit too
        outcome.error = exc
        outcome.traceback = "".join(traceback.format_exception(exc))
    finally:
        _local.depth -= 1


_MACHINERY = ("threading.py", "hub/plugins/deadline.py", "importlib", "<frozen importlib")


def _plugin_frames(frame: Any) -> str:
    """The stack of ``frame`` without the frames of the thread, this module and the import
    machinery above the plugin's own code."""
    frames = traceback.extract_stack(frame)
    kept = list(frames)
    while kept and any(part in kept[0].filename.replace("\\", "/") for part in _MACHINERY):
        kept.pop(0)
    return "".join(traceback.format_list(kept or frames))


def call_with_deadline(
    fn: Callable[[], Any], timeout: float | None, name: str, *, thread: bool | None = None
) -> Outcome:
    """Call ``fn()``; with a ``timeout`` (seconds), in a daemon thread waited for that long.

    ``timeout=None`` calls ``fn`` in the calling thread, or with ``thread=True`` in a daemon
    thread waited for as long as it takes (so that what ``fn`` raises is told apart from a
    signal to the caller). An exception of ``fn`` (any ``BaseException``) is returned in the
    outcome, never raised.

    Example:
        >>> import threading
        >>> gate = threading.Event()
        >>> late = call_with_deadline(gate.wait, timeout=0.01, name="toy")
        >>> late.timed_out, "wait" in late.traceback
        (True, True)
        >>> gate.set()
    """
    start = time.perf_counter()
    if thread is None:
        thread = timeout is not None
    if not thread:
        outcome = Outcome()
        _run(fn, outcome)
        outcome.seconds = time.perf_counter() - start
        return outcome
    box = Outcome()  # written by the thread; read only if it finished in time
    worker = threading.Thread(
        target=_run, args=(fn, box), name=f"{THREAD_PREFIX}{name}", daemon=True
    )
    worker.start()
    worker.join(timeout)
    if not worker.is_alive():
        box.seconds = time.perf_counter() - start
        return box
    frame = sys._current_frames().get(worker.ident or -1)
    stack = _plugin_frames(frame) if frame is not None else ""
    return Outcome(
        timed_out=True,
        traceback=f"Stack of the thread at the deadline (most recent call last):\n{stack}",
        seconds=time.perf_counter() - start,
    )
