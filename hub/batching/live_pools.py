"""The worker pools alive in this process, so that a worker can stop the pools it started.

``hub.batching.pool`` registers each pool here; ``hub.batching.worker`` calls
:func:`shutdown_all` before it exits. Neither imports the other for it.

Example:
    >>> shutdown_all()  # nothing to stop in a process without pools
"""

from __future__ import annotations

import weakref
from typing import Any

__all__ = ["register", "shutdown_all"]

_LIVE: weakref.WeakSet[Any] = weakref.WeakSet()


def register(pool: Any) -> None:
    """Remember ``pool`` (an object with a ``shutdown()`` method) until it is collected."""
    _LIVE.add(pool)


def shutdown_all() -> None:
    """Stop the workers of every pool of this process (a worker calls it before it exits)."""
    for pool in list(_LIVE):
        pool.shutdown()
