"""How many worker threads an EnvPool pool gets when the user does not say.

EnvPool's default (``num_threads=0``) is one thread per hardware thread of the machine, up to
the batch size, whatever CPUs the process may run on. A process restricted to fewer CPUs
(``taskset``, a cgroup cpuset of a container or a cluster job, ``hub bench``'s one core) then
runs more busy threads than it has CPUs: after each batch EnvPool's threads spin before they
sleep, and on a shared CPU that spinning takes the CPU time of the Python loop between steps.
hub asks for one thread per CPU of the process's affinity mask instead, up to the batch size.

Example:
    >>> import os
    >>> default_num_threads(1)
    1
    >>> default_num_threads(64) == min(64, len(os.sched_getaffinity(0)))
    True
"""

from __future__ import annotations

import os

__all__ = ["default_num_threads"]


def default_num_threads(batch_size: int) -> int | None:
    """One per CPU this process may run on, at most ``batch_size``; ``None`` (EnvPool's own
    default) where the platform cannot tell (no ``os.sched_getaffinity``)."""
    affinity = getattr(os, "sched_getaffinity", None)
    if affinity is None:
        return None
    return max(1, min(int(batch_size), len(affinity(0))))
