"""The book of first-ready async batches: which workers step, which answered, which to return.

With ``batch_size < num_envs`` a batched env steps its envs as they come, as EnvPool's async
mode does: ``step_fetch()`` returns the first ``batch_size`` envs to finish, with their
``"env_id"``, and the next ``step_send(td)`` steps exactly the envs of ``td["env_id"]``. The
envs live in workers (processes, Ray actors) that each step a fixed slice of envs together, so a
batch is made of whole workers: ``batch_size`` is a multiple of the envs per worker.

:class:`FirstReady` keeps each worker's state and the order in which they answered, and refuses
the calls that would wait forever or lose data: a fetch with fewer than ``batch_size`` envs under
way, a send to envs that have a step under way or were not fetched, part of a worker's envs,
repeated env ids. It does no I/O; the env that uses it sends and waits.

Example:
    >>> book = FirstReady([(0, 2), (2, 4), (4, 6)], batch_size=2)
    >>> book.started_all()  # after a reset is sent to every worker
    [0, 1, 2]
    >>> book.answered(2); book.answered(0)
    >>> book.has_batch(), book.take()
    (True, [2])
    >>> book.workers_of([4, 5])  # the rows fetched: worker 2's envs
    [2]
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from hub.errors import HubError

__all__ = ["FirstReady", "AsyncCallError", "async_layout"]

IDLE, RUNNING, READY = "idle", "running", "ready"


class AsyncCallError(HubError, RuntimeError):
    """An async call out of order: ``step_send``/``step_fetch`` (or the reset pair) of a
    batched env, or a first-ready call its state cannot serve."""


def async_layout(
    num_envs: int,
    batch_size: int,
    cpus: int,
    num_workers: int | None = None,
    envs_per_worker: int | None = None,
) -> tuple[int, int]:
    """``(num_workers, envs_per_worker)`` for first-ready batches of ``batch_size`` envs out of
    ``num_envs``: every worker holds the same number of envs, which divides ``batch_size``.

    By default a batch spreads over ``cpus`` workers (fewer when ``batch_size`` is smaller), so
    that the workers of one batch step in parallel while the others wait for their actions.

    Example:
        >>> async_layout(16, 4, cpus=2), async_layout(64, 16, cpus=2), async_layout(8, 8, cpus=2)
        ((8, 2), (8, 8), (2, 4))
    """
    if not 1 <= batch_size <= num_envs:
        raise ValueError(
            f"batch_size must be between 1 and num_envs ({num_envs}), got {batch_size}: a "
            "first-ready step returns batch_size of the num_envs envs."
        )
    if num_workers is not None and envs_per_worker is not None:
        raise ValueError("pass num_workers or envs_per_worker, not both.")
    if num_workers is not None:
        if num_envs % num_workers:
            raise ValueError(
                f"with batch_size={batch_size}, every worker holds as many envs: num_workers "
                f"({num_workers}) must divide num_envs ({num_envs})."
            )
        envs_per_worker = num_envs // num_workers
    if envs_per_worker is not None:
        if num_envs % envs_per_worker or batch_size % envs_per_worker:
            fits = [d for d in range(1, batch_size + 1) if not batch_size % d and not num_envs % d]
            raise ValueError(
                f"with batch_size={batch_size}, a batch is made of whole workers: "
                f"envs_per_worker ({envs_per_worker}) must divide both batch_size and num_envs "
                f"({num_envs}); these do: {fits}."
            )
        return num_envs // envs_per_worker, envs_per_worker
    spread = min(max(cpus, 1), batch_size)
    for parts in range(spread, batch_size + 1):
        if batch_size % parts == 0 and num_envs % (batch_size // parts) == 0:
            per = batch_size // parts
            return num_envs // per, per
    return num_envs, 1


class FirstReady:
    """Worker states for first-ready batches (see the module docstring).

    Args:
        bounds: each worker's envs, as ``(first, stop)``; every worker holds as many.
        batch_size: the envs a fetch returns.
    """

    def __init__(self, bounds: Sequence[tuple[int, int]], batch_size: int) -> None:
        sizes = {b - a for a, b in bounds}
        per = sizes.pop()
        if sizes or batch_size % per:
            raise ValueError(
                f"first-ready batches need workers of equal size dividing batch_size "
                f"({batch_size}); got the worker slices {list(bounds)}."
            )
        self.bounds = list(bounds)
        self.per = per
        self.batch_size = batch_size
        self.workers_per_batch = batch_size // per
        self.num_envs = bounds[-1][1]
        self.state = [IDLE] * len(bounds)
        self.queue: deque[int] = deque()  # answered workers, in the order they answered
        self.started = False  # a reset was sent
        self.broken: str | None = None  # why the envs' states are unknown (reset needed)

    # ---------------------------------------------------------------- queries
    def running(self) -> list[int]:
        """The workers with a step under way."""
        return [w for w, s in enumerate(self.state) if s == RUNNING]

    def has_batch(self) -> bool:
        """Whether enough workers answered for a fetch."""
        return len(self.queue) >= self.workers_per_batch

    def env_ids(self, workers: Iterable[int]) -> np.ndarray:
        """The env ids of ``workers``' rows, in order."""
        return np.concatenate([np.arange(*self.bounds[w]) for w in workers])

    # ---------------------------------------------------------------- transitions
    def started_all(self) -> list[int]:
        """A reset was sent to every worker: all run, nothing answered yet."""
        self.state = [RUNNING] * len(self.bounds)
        self.queue.clear()
        self.started = True
        self.broken = None
        return list(range(len(self.bounds)))

    def answered(self, worker: int) -> None:
        """``worker`` answered its step (or reset): its rows can be fetched."""
        if self.state[worker] != RUNNING:
            raise RuntimeError(f"worker {worker} answered without a step under way (a bug).")
        self.state[worker] = READY
        self.queue.append(worker)

    def take(self) -> list[int]:
        """The workers of the next batch: the first to answer; they wait for actions now."""
        self.check_fetch()
        workers = [self.queue.popleft() for _ in range(self.workers_per_batch)]
        for w in workers:
            self.state[w] = IDLE
        return workers

    def check_fetch(self) -> None:
        """Raise when a fetch could not be served: before a reset, after a failure, or with
        fewer than ``batch_size`` envs under way (it would wait forever)."""
        self._check_usable("step_fetch")
        under_way = len(self.queue) + self.state.count(RUNNING)
        if under_way < self.workers_per_batch:
            raise AsyncCallError(
                f"step_fetch() would wait forever: {under_way * self.per} envs have a step under "
                f"way or a result to fetch, fewer than batch_size={self.batch_size}. Send the "
                "actions of the rows you fetched (env.step_send(td)) first."
            )

    def workers_of(self, env_ids: Any) -> list[int]:
        """The workers whose envs are ``env_ids`` (one send): whole workers, each waiting for
        its actions; raises :class:`AsyncCallError` naming what is wrong otherwise."""
        self._check_usable("step_send")
        ids = np.asarray(env_ids).reshape(-1)
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_envs):
            raise AsyncCallError(
                f"step_send(): env ids must be in [0, {self.num_envs}), got {ids.tolist()[:16]}."
            )
        if len(np.unique(ids)) != ids.size:
            raise AsyncCallError(
                f"step_send(): repeated env ids {ids.tolist()[:16]}: send one action per env."
            )
        workers = sorted({int(i) // self.per for i in ids})
        if ids.size != len(workers) * self.per:
            raise AsyncCallError(
                f"step_send(): the envs of a worker step together ({self.per} per worker), and "
                f"env ids {ids.tolist()[:16]} hold part of a worker's envs. Send the rows of a "
                "step_fetch() as they came (its 'env_id' entry)."
            )
        busy = [w for w in workers if self.state[w] != IDLE]
        if busy:
            what = {RUNNING: "a step under way", READY: "a result not fetched yet"}
            reasons = sorted({what[self.state[w]] for w in busy})
            raise AsyncCallError(
                f"step_send(): the envs {self.env_ids(busy).tolist()[:16]} have "
                f"{' or '.join(reasons)}; send actions only to the envs of the last "
                "step_fetch() (or reset())."
            )
        return workers

    def sent(self, workers: Iterable[int]) -> None:
        for w in workers:
            self.state[w] = RUNNING

    def fail(self, why: str) -> None:
        """A worker failed: the envs' states are unknown until the next reset."""
        self.broken = why

    def _check_usable(self, what: str) -> None:
        if not self.started:
            raise AsyncCallError(f"{what}() before reset(): call env.reset() first.")
        if self.broken is not None:
            raise AsyncCallError(
                f"{what}(): {self.broken}; the envs' states are not known. Call env.reset()."
            )
