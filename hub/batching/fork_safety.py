"""What makes starting workers with ``fork`` safe: no garbage collection across the fork, and a
census of the threads that a fork would leave behind.

**Garbage collection.** A forked child starts with a copy of every object of its parent,
garbage included. If the child's collector ran before the worker froze those objects, it would
finalize objects of the parent (an EnvPool pool, an EGL context, a pygame surface) in a process
that does not own their native resources. The collector runs when allocations pass a
threshold, and the child allocates before the worker's first line (``threading._after_fork``,
``multiprocessing``'s start-up). :func:`no_collection` therefore disables the collector in the
parent around ``Process.start()``; the child inherits it disabled, and the worker calls
:func:`freeze_inherited` first thing: every inherited object goes to the permanent generation,
then the collector is enabled again (if the parent had it enabled). So no collection can run in
a worker between the fork and the freeze, and none ever visits the parent's objects.

**Threads.** A fork copies only the forking thread; a lock another thread held at that moment
stays held in the child, and a thread pool's state is copied without its threads.
:func:`unsafe_threads` lists the threads of this process (``/proc/self/task``, so native threads
count, not only Python ones) that are not known to be safe across a fork:

- hub's own helper threads (``hub-copy``): they hold no lock while idle and are forgotten in
  the child;
- torch's intra-op pool (up to ``torch.get_num_threads() - 1`` threads): a worker sets one torch thread before its first
  op and never enters the copied pool;
- the BLAS pool numpy starts at import (OpenBLAS shuts its threads down before a fork and starts
  them again after it): up to ``os.cpu_count() - 1`` threads.

These are counted, not recognised (``/proc`` does not say which library started a thread): a
foreign thread that takes the place of a pool thread not running at that moment (numpy's BLAS
pool right after a fork, before its next use) goes unnoticed. Anything beyond that count
(EnvPool's thread pool, llvmpipe's rendering threads, SDL's timer, a
Python thread of the user's) makes ``start_method=None`` choose ``forkserver`` instead.

Example:
    >>> with no_collection():
    ...     pass
    >>> isinstance(unsafe_threads(), list)
    True
"""

from __future__ import annotations

import contextlib
import gc
import os
import sys
import threading
from collections.abc import Iterator

__all__ = ["no_collection", "freeze_inherited", "os_thread_ids", "unsafe_threads"]

SAFE_PYTHON_THREADS = ("hub-copy",)  # name prefixes of hub's own fork-safe helper threads


@contextlib.contextmanager
def no_collection() -> Iterator[bool]:
    """Disable the garbage collector for the block (a fork in it starts the child with the
    collector off); yields whether it was enabled before."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield enabled
    finally:
        if enabled:
            gc.enable()


def freeze_inherited(enable: bool) -> None:
    """In a new worker: move every object it holds now (the parent's, after a fork) to the
    permanent generation, then enable the collector if ``enable``."""
    gc.freeze()
    if enable:
        gc.enable()


def os_thread_ids() -> list[int]:
    """The ids of this process's OS threads, native ones included (``[]`` where ``/proc`` is
    not available)."""
    try:
        return sorted(int(t) for t in os.listdir("/proc/self/task"))
    except OSError:
        return []


def _known_native_threads() -> int:
    """How many native threads torch's intra-op pool and numpy's BLAS pool may have here.

    numpy's pool is started first (OpenBLAS stops its threads before a fork and starts them at
    its next use; a pool not running would leave its place in the count to another thread): one
    128x128 product. torch's pool is not: a parallel region run in a forked child of a process
    whose pool was running deadlocks (GNU OpenMP), and this census runs in such children too."""
    known = 0
    torch = sys.modules.get("torch")
    if torch is not None:
        known += max(torch.get_num_threads() - 1, 0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        square = numpy.ones((128, 128))
        square @ square
        known += max((os.cpu_count() or 1) - 1, 0)
    return known


def unsafe_threads() -> list[str]:
    """The threads of this process that a ``fork`` is not known to be safe with, described
    (empty: ``fork`` is safe as far as hub can tell; see the module docstring)."""
    me = threading.get_ident()
    python = [t for t in threading.enumerate() if t.ident != me]
    unsafe = [
        f"Python thread {t.name!r}"
        for t in python
        if not t.name.startswith(SAFE_PYTHON_THREADS) and t.is_alive()
    ]
    tids = os_thread_ids()
    if tids:
        python_tids = {t.native_id for t in python} | {threading.get_native_id()}
        native = [tid for tid in tids if tid not in python_tids]
        extra = len(native) - _known_native_threads()
        if extra > 0:
            unsafe.append(f"{extra} native thread(s) beyond torch's and BLAS's pools")
    return unsafe
