"""The worker pools alive in this process, so that a worker process can stop the pools it
started (a ``ParallelEnv`` inside a ``ParallelEnv``'s worker) before it exits.

It sits below both :mod:`hub.batching.pool` (which adds each pool it starts) and
:mod:`hub.batching.worker` (which stops them on exit), so neither imports the other.

Example:
    >>> from hub.batching.live_pools import shutdown_all
    >>> shutdown_all()  # no pool started here: nothing to stop
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["track", "shutdown_all"]

_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def track(pool: Any) -> None:
    """Remember ``pool`` (an object with ``shutdown()``) until it is garbage."""
    _LIVE.add(pool)


def shutdown_all() -> None:
    """Stop the workers of every pool of this process (a worker calls it before it exits)."""
    for pool in list(_LIVE):
        pool.shutdown()
