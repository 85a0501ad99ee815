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
import torch

from hub.errors import HubError
from hub.specs import numpy_dtype

__all__ = ["FirstReady", "RestartingBatch", "AsyncCallError", "async_layout"]

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
        self.sends = [0] * len(bounds)  # when each worker was last sent a step (a counter)
        self._count = 0
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
        self.sends = [0] * len(self.bounds)
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

    def send_ids(self, tensordict: Any) -> np.ndarray:
        """The env ids a ``step_send(td)`` addresses (``td["env_id"]``, int64, flat)."""
        env_ids = tensordict.get("env_id", None)
        if env_ids is None:
            raise AsyncCallError(
                "step_send(td) in first-ready async mode needs td['env_id'] (the rows of the "
                "last step_fetch() or reset(), with their actions)."
            )
        return env_ids.reshape(-1).cpu().numpy().astype(np.int64)

    @staticmethod
    def reset_seed(rows: Any, kwargs: dict[str, Any]) -> Any:
        """The seed of a first-ready ``reset()`` (``None`` without one); refuses a partial
        reset and reset options, which the envs cannot take as they restart one by one."""
        if rows is not None and not np.asarray(rows).all():
            raise AsyncCallError(
                "in first-ready async mode (batch_size < num_envs) reset() restarts every env; "
                "an env whose episode ended restarts with the next step_send() to it."
            )
        options = {k: v for k, v in kwargs.items() if k != "seed"}
        if options:
            raise TypeError(
                f"reset() options {sorted(options)} are not available in first-ready async "
                "mode (the envs reset as they come); pass them to the env factory instead."
            )
        return kwargs.get("seed")

    def batch_specs(self, specs: Sequence[Any], name: str, join: Any) -> Any:
        """The spec ``name`` of a first-ready batch: ``join`` of ``workers_per_batch`` of the
        workers' ``specs``, which must be equal (a row may come from any worker)."""
        if any(spec != specs[0] for spec in specs[1:]):
            raise HubError(
                f"first-ready async mode (batch_size={self.batch_size}) needs sub-envs with "
                f"equal specs (a row may come from any of them); their {name} differ."
            )
        return join(list(specs[: self.workers_per_batch]), name)

    def observation_specs(self, observations: Any, device: Any) -> Any:
        """``observations`` (a Composite of ``batch_size`` rows) with ``"env_id"`` and
        ``"is_init"``: which env a row is, and whether it starts an episode."""
        from hub.specs import Categorical

        rows = (self.batch_size,)
        observations = observations.clone()
        observations["env_id"] = Categorical(self.num_envs, shape=rows, device=device)
        observations["is_init"] = Categorical(2, shape=(*rows, 1), dtype=torch.bool, device=device)
        return observations

    def sent(self, workers: Iterable[int]) -> None:
        self._count += 1
        for w in workers:
            self.state[w] = RUNNING
            self.sends[w] = self._count

    def oldest_first(self, workers: Iterable[int]) -> list[int]:
        """``workers`` (found ready together) in the order they were sent their steps: the
        one that waited longest comes first, so that no worker is passed over again and again
        when several are ready at once."""
        return sorted(workers, key=self.sends.__getitem__)

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


class RestartingBatch:
    """The envs' side of first-ready batches: a batched env whose ended envs restart with the
    next step sent to them (EnvPool's async semantics), for a worker process or an actor.

    :meth:`step` restarts the envs whose episode ended in the last step (their action is not
    used) and steps the others; :meth:`reset` restarts them all. Both return one row per env,
    with ``"is_init"`` set on the rows that start an episode (first observation, reward 0, done
    flags ``False``) and all three done flags.

    Args:
        env: a hub env of batch size ``[k, ...]``, used through its public array-level entry
            points (``step_arrays``, ``reset_arrays``).

    Example:
        >>> import numpy as np
        >>> from hub.batching import SerialEnv
        >>> from hub.envs.builtin import CountingEnv
        >>> batch = RestartingBatch(SerialEnv(2, CountingEnv, {"max_steps": 1}))
        >>> batch.reset()["is_init"].tolist()
        [True, True]
        >>> out = batch.step({"action": np.ones((2, 1), dtype=np.int64)})
        >>> out["observation"].ravel().tolist(), out["done"].ravel().tolist()
        ([1, 1], [True, True])
        >>> batch.step({"action": np.ones((2, 1), dtype=np.int64)})["is_init"].tolist()
        [True, True]
    """

    def __init__(self, env: Any) -> None:
        self.env = env
        self.n = int(env.batch_size[0]) if len(env.batch_size) else 1
        self.restart = np.ones(self.n, dtype=bool)  # ended, or never started
        rewards = env.full_reward_spec
        self.zero_rewards = {
            key: np.zeros(tuple(rewards[key].shape), dtype=numpy_dtype(rewards[key].dtype))
            for key in rewards.keys(include_nested=True, leaves_only=True)
        }

    def step(self, inputs: dict[Any, Any]) -> dict[Any, Any]:
        """Restart the envs that ended, step the others (``inputs``: their actions)."""
        restart = self.restart
        if restart.all():
            return self.reset()
        env = self.env
        if not restart.any():
            out = dict(env.step_arrays(inputs, None))
            out["is_init"] = np.zeros(self.n, dtype=bool)
        else:
            out = _with_first_rows(
                dict(env.step_arrays(inputs, ~restart)), env.reset_arrays(restart), restart
            )
            out["is_init"] = restart.copy()
        out = _all_flags(out, self.n)
        self.restart = _numpy(out["done"]).reshape(self.n, -1).any(-1)
        return out

    def reset(self) -> dict[Any, Any]:
        """Restart every env."""
        out = _with_first_rows({}, self.env.reset_arrays(None), np.ones(self.n, dtype=bool))
        for key, zeros in self.zero_rewards.items():
            out.setdefault(key, zeros.copy())
        out["is_init"] = np.ones(self.n, dtype=bool)
        self.restart = np.zeros(self.n, dtype=bool)
        return _all_flags(out, self.n)


def _numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def _with_first_rows(out: dict[Any, Any], first: Any, rows: np.ndarray) -> dict[Any, Any]:
    """``out`` (a step's arrays, or ``{}``) with the reset output ``first`` in ``rows``: the
    first observations there, reward 0 and done flags ``False``."""
    merged = dict(out)
    for key, value in first.items():
        new = _numpy(value)
        old = merged.get(key)
        if old is None:
            merged[key] = new
            continue
        old = np.array(_numpy(old), copy=True)
        if old.shape != new.shape and old.size == new.size:
            new = new.reshape(old.shape)
        old[rows] = new[rows]
        merged[key] = old
    n = len(rows)
    for key in ("reward", *_FLAG_KEYS):
        value = merged.get(key)
        if value is not None:
            value = np.array(_numpy(value), copy=True)
            value.reshape(n, -1)[rows] = 0
            merged[key] = value
    return merged


_FLAG_KEYS = ("done", "terminated", "truncated")


def _all_flags(out: dict[Any, Any], n: int) -> dict[Any, Any]:
    """``out`` with all three done flags (the missing ones derived, as the step pipeline does),
    so that every row of a first-ready batch carries the same entries."""
    flags = {k: _numpy(out[k]).reshape(n, -1).astype(bool) for k in _FLAG_KEYS if k in out}
    if len(flags) == 3:
        return out
    width = next(iter(flags.values())).shape[1] if flags else 1
    trunc = flags.get("truncated", np.zeros((n, width), dtype=bool))
    done = flags.get("done")
    term = flags.get("terminated")
    if term is None:
        term = done & ~trunc if done is not None else np.zeros_like(trunc)
    if done is None:
        done = term | trunc
    return {**out, "done": done, "terminated": term, "truncated": trunc}


def is_init_spec(batch: tuple[int, ...], device: Any) -> Any:
    """The ``"is_init"`` flag of first-ready rows (``[*batch, 1]``, bool)."""
    from hub.specs import Categorical

    return Categorical(2, shape=(*batch, 1), dtype=torch.bool, device=device)
