"""``ParallelEnv``: sub-envs in worker processes, several per worker, as one batched env.

Same API and same results as :class:`hub.SerialEnv` (identical rollouts for the same seed,
whatever the layout). ``num_envs`` sub-envs are spread over ``num_workers`` processes (by
default one per CPU this process may use), ``envs_per_worker`` each; a worker steps its slice of
sub-envs as a batch-first ``SerialEnv`` and reads and writes its slice of shared-memory buffers
laid out from the specs. A step or reset is one byte each way per worker
(:mod:`hub.batching.signals`); in ``step_and_maybe_reset`` and ``rollout`` the sub-envs whose
episode ended are reset inside the workers, in the same message. A worker's exception re-raises
here as :class:`hub.errors.WorkerError` with its traceback; a dead worker is reported within a
bounded time, never waited for forever.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = hub.ParallelEnv(4, CountingEnv, {"max_steps": 4}, num_workers=2)
    >>> env.num_workers, env.envs_per_worker, env.max_steps
    (2, 2, [4, 4, 4, 4])
    >>> env.rollout(3)["next", "observation"].squeeze(-1).tolist()
    [[1, 2, 3], [1, 2, 3], [1, 2, 3], [1, 2, 3]]
    >>> env.close()
"""

from __future__ import annotations

import math
import os
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from tensordict import TensorDict, TensorDictBase

from hub.batching import signals as sig
from hub.batching.batched import BatchedEnvBase, EnvFactory, check_timeout, join_specs
from hub.batching.faults import LastData, object_rows, truncate_rows
from hub.batching.first_ready import AsyncCallError, FirstReady, async_layout, is_init_spec
from hub.batching.parallel_async import FirstReadyMixin
from hub.batching.pool import Answer, Pending, WorkerPool
from hub.batching.row_access import join_by_index, split_indices, split_values
from hub.batching.shared_buffers import BufferLayout, SharedViews
from hub.batching.worker import WorkerEnvs
from hub.envs.seeding import derived_seed
from hub.errors import ClosedEnvError, HubError, WorkerError, WorkerTimeoutError
from hub.specs import Categorical

__all__ = [
    "ParallelEnv",
    "AsyncCallError",
    "WorkerRestartWarning",
    "worker_layout",
]

# how long a wait may poll before it sleeps, and the longest average wait for which it does:
# longer than a tight loop's gaps with cheap envs (a CartPole step of 8 workers on 2 cores takes
# 0.4 ms), shorter than expensive steps (8 Pong workers: 2.6 ms), where polling costs the workers
# more CPU than the wake-ups it saves (measured: docs/batching.md)
SPIN_WAIT_S = 5e-4


class WorkerRestartWarning(RuntimeWarning):
    """A failed worker was rebuilt (``restart_failed=True``)."""


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity mask; the machine's count elsewhere)."""
    affinity = getattr(os, "sched_getaffinity", None)
    return max(1, len(affinity(0)) if affinity else os.cpu_count() or 1)


def worker_layout(
    num_envs: int, num_workers: int | None = None, envs_per_worker: int | None = None
) -> tuple[int, int]:
    """``(num_workers, envs_per_worker)`` for ``num_envs`` sub-envs: the given one decides
    the other; with neither, one worker per CPU this process may use (at most one per sub-env),
    the sub-envs spread evenly.

    Example:
        >>> worker_layout(256, num_workers=2), worker_layout(10, envs_per_worker=4)
        ((2, 128), (3, 4))
    """
    if num_workers is not None and envs_per_worker is not None:
        raise ValueError(
            "pass num_workers or envs_per_worker, not both: each decides the other "
            f"(num_envs={num_envs})."
        )
    if envs_per_worker is not None:
        per = _positive("envs_per_worker", envs_per_worker)
        return math.ceil(num_envs / per), min(per, num_envs)
    workers = usable_cpus() if num_workers is None else _positive("num_workers", num_workers)
    workers = min(workers, num_envs)
    per = math.ceil(num_envs / workers)
    return math.ceil(num_envs / per), per


def _positive(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name} must be a positive int, got {value!r}.")
    return int(value)


@dataclass
class _Job:
    """A step or reset sent to the workers, waiting for (or holding) their answers."""

    kind: str  # "step" or "reset"
    pending: Pending
    workers: list[int]
    fused: bool = False  # a step that resets inside the workers
    rows: np.ndarray | None = None  # the sub-envs it reaches (None: all)
    kwargs: dict[str, Any] | None = None
    tensordict: TensorDictBase | None = None  # step_send's input, for step_fetch
    inputs: dict[Any, Any] | None = None  # the step's input arrays (a step that timed out)
    timed_out: bool = False  # left pending by a synchronous call that timed out


class _WorkerSpecs:
    """A worker's specs, as the batched base reads them from an env."""

    def __init__(self, description: dict[str, Any]) -> None:
        self.batch_size = torch.Size(description["batch_size"])
        device = description["device"]
        self.device = torch.device(device) if device is not None else None
        for name in (
            "full_observation_spec",
            "full_reward_spec",
            "full_done_spec",
            "full_action_spec",
            "full_state_spec",
        ):
            setattr(self, name, description[name])


class ParallelEnv(FirstReadyMixin, BatchedEnvBase):
    """Run ``num_envs`` envs in worker processes as one env of batch size ``[num_envs]``.

    Args:
        num_envs: the number of sub-envs (TorchRL calls it ``num_workers``: here a worker is a
            process, which holds ``envs_per_worker`` sub-envs).
        create_env_fn: builds one env (or one callable per sub-env). With ``spawn`` or
            ``forkserver`` it must pickle: a module-level function, a class, or a
            ``functools.partial`` of one.
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one per
            sub-env).
        num_workers: the number of worker processes (default: one per CPU this process may
            use, at most one per sub-env); the sub-envs are spread evenly over them.
        envs_per_worker: the number of sub-envs per worker instead (the last worker may hold
            fewer); pass one of the two at most.
        create_batch_fn: ``create_batch_fn(k)`` builds a worker's ``k`` sub-envs as one natively
            batched env (``make_env(..., batching="parallel")`` passes it for namespaces with
            native batching, such as ``envpool``); by default a worker holds a batch-first
            ``SerialEnv`` of ``create_env_fn`` copies. Each worker's batch is seeded with the
            seed of its first sub-env.
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs in this process (see
            :class:`hub.EnvBase`; a non-finite reward then raises).
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` (default: ``fork`` when this
            process runs one thread and the platform has it, else ``forkserver``, else
            ``spawn``; see ``docs/batching.md``).
        restart_failed: rebuild a worker that raises or dies (its sub-envs are built and
            seeded again), warn with :class:`WorkerRestartWarning` and count it in
            ``restarts``; the failed step reports every sub-env of that worker as truncated.
            Without it, the failure raises :class:`hub.errors.WorkerError`.
        timeout: seconds that ``step``, ``reset`` and the other synchronous calls wait for the
            workers before raising :class:`hub.errors.WorkerTimeoutError` (``None``: as long as
            they are alive; a dead worker is always reported).
        start_timeout: the same for building the envs in the workers (at start-up and restarts).
        shutdown_timeout: seconds ``close()`` gives the workers to exit before killing them.
        spin_wait: seconds a waiting process (this one for the workers' answers, a worker for
            its next command) keeps polling, giving its core away between polls, before it
            sleeps (``0``: always sleep at once; see ``docs/batching.md``).
        batch_size: first-ready async mode (EnvPool's ``batch_size``): ``step_fetch()`` returns
            the first ``batch_size`` envs to finish, with their ``"env_id"`` and ``"is_init"``,
            and ``step_send(td)`` steps the envs of ``td["env_id"]`` (see
            :mod:`hub.batching.parallel_async`). The env's batch size is then
            ``[batch_size]``; every worker holds as many envs, a divisor of ``batch_size``
            (by default a batch spreads over the CPUs). ``None``: every env steps at once.

    Attributes:
        num_envs, num_workers, envs_per_worker: the layout (see above).
        restarts: how many times each worker was rebuilt.
        start_method: the start method in use.

    ``step_send(td)`` / ``step_fetch(timeout=None)`` and ``reset_send(td=None)`` /
    ``reset_fetch(timeout=None)`` split a step or a reset in two, so that this process can work
    while the workers step.
    """

    def __init__(
        self,
        num_envs: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        num_workers: int | None = None,
        envs_per_worker: int | None = None,
        create_batch_fn: Callable[[int], Any] | None = None,
        device: Any = None,
        checks: bool = False,
        start_method: str | None = None,
        restart_failed: bool = False,
        timeout: float | None = None,
        start_timeout: float | None = None,
        shutdown_timeout: float = 3.0,
        spin_wait: float = SPIN_WAIT_S,
        spec_locked: bool = True,
        batch_size: int | None = None,
    ) -> None:
        self._async_rows_requested = batch_size
        self.restart_failed = restart_failed
        self.timeout = timeout
        self.start_timeout = check_timeout("start_timeout", start_timeout)
        self._start_method = start_method
        self._shutdown_timeout = shutdown_timeout
        if spin_wait < 0:
            raise ValueError(f"spin_wait must be >= 0 seconds, got {spin_wait}.")
        self._spin_wait = float(spin_wait)
        self._layout_request = (num_workers, envs_per_worker)
        self._create_batch_fn = create_batch_fn
        self._pool: WorkerPool | None = None
        self._views: SharedViews | None = None
        self._descriptions: list[dict[str, Any]] = []
        self._job: _Job | None = None  # sent with *_send (or timed out), not fetched yet
        self._fetched: _Job | None = None  # answered, about to be read by the hooks
        self._in_flight: str | None = None  # a step or reset sent and not returned yet
        self._unsynced: set[int] = set()  # workers whose pipes an interrupted call left unread
        self._seed: int | None = None
        self._last = LastData()  # each sub-env's last data (a rebuilt worker's step)
        self.restarts: list[int] = []
        self._constructed = False
        super().__init__(
            num_envs,
            create_env_fn,
            create_env_kwargs,
            device=device,
            checks=checks,
            spec_locked=spec_locked,
        )
        self.restarts = [0] * self.num_workers
        self._constructed = True

    # ---------------------------------------------------------------- start-up
    @property
    def start_method(self) -> str:
        """The start method of the worker processes."""
        return self._pool.start_method if self._pool is not None else str(self._start_method)

    def _rows_per_step(self) -> int:
        return self._book.batch_size if self._book is not None else self.num_envs

    def _meta_env(self) -> _WorkerSpecs:
        n = len(self._factories)
        rows = self._async_rows_requested
        if rows is None:
            workers, per = worker_layout(n, *self._layout_request)
        else:
            if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)):
                raise TypeError(f"batch_size must be an int or None, got {rows!r}.")
            workers, per = async_layout(n, int(rows), usable_cpus(), *self._layout_request)
        self.num_workers, self.envs_per_worker = workers, per
        self._bounds = [(w * per, min(n, (w + 1) * per)) for w in range(workers)]
        if rows is not None:
            self._book = FirstReady(self._bounds, int(rows))
        batch_fn = self._create_batch_fn
        builders = [
            WorkerEnvs(self._factories[a:b], self._factory_kwargs[a:b], a, batch_fn)
            for a, b in self._bounds
        ]
        pool = WorkerPool(
            builders,
            [{} for _ in builders],
            self._start_method,
            self._shutdown_timeout,
            self._spin_wait,
        )
        self._pool = pool
        try:
            for w in range(workers):
                pool.start(w)
            try:
                answers = pool.collect(Pending("start-up", set(range(workers))), self.start_timeout)
            except WorkerTimeoutError as exc:
                raise WorkerTimeoutError(
                    f"the workers {exc.args[0].split('workers ', 1)[-1].split(' did')[0]} did "
                    f"not build their envs within start_timeout={self.start_timeout} s; they "
                    "were stopped. Raise start_timeout for envs that take long to build (or "
                    "pass None for no limit).",
                    worker=exc.worker,
                ) from None
            self._raise_failures(answers, "start-up (building the envs)", restart=False)
        except BaseException:
            pool.shutdown()
            raise
        self._descriptions = [answers[w].payload for w in range(workers)]
        first = _WorkerSpecs(self._descriptions[0])
        meta = _WorkerSpecs(self._descriptions[0])
        meta.batch_size = first.batch_size[1:]  # one sub-env's batch (a worker holds several)
        return meta

    def _set_specs_from(self, meta: Any) -> None:
        workers = [_WorkerSpecs(d) for d in self._descriptions]
        names = (
            "full_observation_spec",
            "full_reward_spec",
            "full_done_spec",
            "full_action_spec",
            "full_state_spec",
        )
        # the specs of every sub-env, which lay out the shared buffers
        self._all_specs = {n: join_specs([getattr(w, n) for w in workers], n) for n in names}
        book = self._book
        if book is None:
            for name in names:
                setattr(self, name, self._all_specs[name])
            return
        # first-ready rows come from any worker: one spec for all, of batch_size rows
        for name in names:
            setattr(
                self, name, book.batch_specs([getattr(w, name) for w in workers], name, join_specs)
            )
        self.full_observation_spec = book.observation_specs(self.full_observation_spec, self.device)

    def _ready_pool(self) -> WorkerPool:
        pool = self._pool
        if pool is None or pool.closed or self._closed:
            raise ClosedEnvError(
                "this ParallelEnv is closed (its workers are stopped); build a new one."
            )
        if self._views is None:
            self._setup_buffers(pool)
        if self._unsynced:
            self._resync(pool)
        if pool.dead and self.restart_failed:
            for w in sorted(pool.dead):
                self._restart(w, f"worker {w} {pool.dead[w]}")
        return pool

    def _resync(self, pool: WorkerPool) -> None:
        """After an interrupted call: read and drop what the workers answered to it."""
        failed = pool.resync(sorted(self._unsynced), self.timeout)
        self._unsynced.clear()
        for w, answer in sorted(failed.items()):
            if answer.status != b"?":
                continue  # died: reported as dead by the next call
            if self.restart_failed:
                pool.kill_hung(w, f"did not answer within {self.timeout} s")
                continue
            self._unsynced.update(failed)
            raise WorkerTimeoutError(
                f"worker {w} is still busy with a call that was interrupted, {self.timeout} s "
                "later. env.close() stops the workers; ParallelEnv(..., restart_failed=True) "
                "kills and rebuilds workers that hang.",
                worker=w,
            )

    def _layout(self) -> BufferLayout:
        def leaves(spec: Any) -> list[tuple[Any, Any]]:
            return [(k, spec[k]) for k in spec.keys(include_nested=True, leaves_only=True)]

        specs = self._all_specs
        obs = leaves(specs["full_observation_spec"])
        reward = leaves(specs["full_reward_spec"])
        done = leaves(specs["full_done_spec"])
        state = leaves(specs["full_state_spec"])
        action = leaves(specs["full_action_spec"])
        if self._book is not None:  # which rows start an episode
            obs.append(("is_init", is_init_spec((self.num_envs,), self.device)))
        rows = [("rows", Categorical(2, shape=(self.num_envs,), dtype=torch.bool))]
        groups = {
            "input": _unique(action + state),
            "rows": rows,
            "next": _unique(obs + reward + done + state),
            "reset_out": _unique(obs + done + state),
        }
        return BufferLayout.from_groups(
            (self.num_envs, *self._sub_batch),
            groups,
            self._bounds,
            optional=frozenset(("next", "reset_out")),
        )

    def _setup_buffers(self, pool: WorkerPool) -> None:
        layout = self._layout()
        views = pool.buffers.map(layout)
        answers = pool.collect(
            pool.send_control(range(self.num_workers), "layout", layout), self.start_timeout
        )
        self._raise_failures(answers, "setting up the shared buffers", restart=False)
        self._views = views
        self._input = views.numpy_leaves("input")
        self._rows_view = views.numpy_leaves("rows")[0][1]
        self._next = views.numpy_leaves("next")
        self._reset_out = views.numpy_leaves("reset_out")

    # ---------------------------------------------------------------- failures
    def _raise_failures(self, answers: dict[int, Answer], what: str, restart: bool) -> list[int]:
        """Raise the first failure among ``answers`` as a WorkerError, or (with
        ``restart_failed``) rebuild the failed workers and return their indices."""
        errors = []
        for w in sorted(answers):
            answer = answers[w]
            envs = self._envs_note(w)
            if answer.status == sig.ERROR:
                name, message, tb = answer.payload
                errors.append(
                    WorkerError(
                        f"worker {w} raised {name} during {what}: {message}{envs}",
                        worker=w,
                        traceback=tb,
                    )
                )
            elif answer.died:
                errors.append(
                    WorkerError(
                        f"worker {w} {self._pool.dead.get(w, 'died')} during {what}.{envs}"
                        f"{_main_guard_hint(self, answer)}",
                        worker=w,
                    )
                )
        if not errors:
            return []
        if restart and self.restart_failed:
            for error in errors:
                self._restart(error.worker, str(error).split("\n", 1)[0])
            return [e.worker for e in errors]
        first = errors[0]
        if len(errors) > 1:
            first.args = (
                f"{first.args[0]}\n\n(workers {[e.worker for e in errors[1:]]} failed too)",
            )
        raise first

    def _envs_of(self, worker: int) -> str:
        start, stop = self._bounds[worker] if hasattr(self, "_bounds") else (worker, worker + 1)
        return f"{start}" if stop - start == 1 else f"{start}-{stop - 1}"

    def _envs_note(self, worker: int) -> str:
        """`` (worker w holds sub-envs a-b)`` when workers hold several sub-envs."""
        if getattr(self, "envs_per_worker", 1) == 1:
            return ""
        return f" (worker {worker} holds sub-envs {self._envs_of(worker)})"

    def _restart(self, index: int, reason: str) -> None:
        pool = self._pool
        pool.stop(index)
        pool.start(index)
        answers = pool.collect(Pending("restart", {index}), self.start_timeout)
        self._raise_failures(answers, f"restarting worker {index}", restart=False)
        if self._views is not None:
            answers = pool.collect(
                pool.send_control([index], "layout", self._views.layout), self.start_timeout
            )
            self._raise_failures(answers, f"restarting worker {index}", restart=False)
        self.restarts[index] += 1
        if self._seed is not None:
            start = self._bounds[index][0]
            seed = derived_seed(self._seed + start, self.restarts[index])
            answers = pool.collect(pool.send_control([index], "seed", seed), self.timeout)
            self._raise_failures(answers, f"seeding restarted worker {index}", restart=False)
        warnings.warn(
            f"ParallelEnv worker {index} was rebuilt after a failure ({reason}); it has been "
            f"restarted {self.restarts[index]} time(s).{self._envs_note(index)}",
            WorkerRestartWarning,
            stacklevel=4,
        )

    # ---------------------------------------------------------------- async state
    def _idle(self, what: str) -> None:
        job = self._job
        if job is None:
            return
        if job.timed_out:
            raise AsyncCallError(
                f"{what}() was called while the {job.kind} that timed out (WorkerTimeoutError) "
                f"is still pending in workers {sorted(job.pending.waiting)}: "
                f"env.{job.kind}_fetch(timeout=...) waits for its result, env.reset() drops it "
                "and starts new episodes once the workers answer, env.close() stops the "
                "workers. ParallelEnv(..., restart_failed=True) kills and rebuilds workers that "
                "hang instead."
            )
        raise AsyncCallError(
            f"{what}() was called while a {job.kind} sent with {job.kind}_send() is pending: "
            f"call {job.kind}_fetch() first to collect it."
        )

    def _wait(self, job: _Job, timeout: float | None, sync: bool = True) -> dict[int, Answer]:
        """Wait for ``job``'s answers. A timeout of a synchronous call (``sync``: the env's own
        ``timeout``) kills and rebuilds the hung workers with ``restart_failed`` (their answer is
        their death), else leaves the job pending for ``*_fetch`` or ``reset()``; an interrupt
        (``KeyboardInterrupt``) leaves the workers' pipes to be re-synced by the next call."""
        self._job = job  # kept if the wait times out, so that *_fetch can resume it
        try:
            answers = self._pool.collect(job.pending, timeout)
        except WorkerTimeoutError as exc:
            if not sync:
                raise
            if self.restart_failed:
                for w in sorted(job.pending.waiting):
                    job.pending.answers[w] = self._pool.kill_hung(
                        w, f"did not answer within {timeout} s and was killed"
                    )
                job.pending.waiting.clear()
                self._job = None
                return job.pending.answers
            job.timed_out = True
            raise WorkerTimeoutError(
                f"{job.pending.what}: workers {sorted(job.pending.waiting)} did not answer within "
                f"{timeout} s. The {job.kind} is still pending: env.{job.kind}_fetch(timeout=...) "
                "waits for its result, env.reset() drops it and starts new episodes once the "
                "workers answer, env.close() stops the workers. ParallelEnv(..., "
                "restart_failed=True) kills and rebuilds workers that hang instead.",
                worker=exc.worker,
            ) from None
        except BaseException:
            self._interrupted(job.pending.waiting | set(job.pending.answers) | set(job.workers))
            raise
        self._job = None
        return answers

    def _interrupted(self, workers: set[int]) -> None:
        """A call was interrupted while ``workers`` were in it: their answers are re-synced and
        the sub-envs need a full reset before the next step."""
        self._job = None
        self._unsynced.update(workers)

    def _drop_timed_out(self) -> None:
        """``reset()`` after a timed-out step or reset: wait for it (the env's ``timeout``) and
        drop its result."""
        job = self._job
        if job is None or not job.timed_out:
            return
        answers = self._wait(job, self.timeout)
        self._raise_failures(answers, f"the {job.kind} that timed out", restart=True)

    def _workers_of(self, rows: np.ndarray | None) -> list[int]:
        """The workers that hold at least one of ``rows`` (``None``: every worker)."""
        if rows is None:
            return list(range(self.num_workers))
        return [w for w, (a, b) in enumerate(self._bounds) if rows[a:b].any()]

    def _write_rows(self, rows: np.ndarray | None) -> None:
        if rows is not None:
            np.copyto(self._rows_view, rows)

    # ---------------------------------------------------------------- the hooks: step
    def _send_step(self, inputs: dict[Any, Any], rows: Any, fused: bool) -> _Job:
        pool = self._ready_pool()
        if self._in_flight is not None:
            raise HubError(
                f"the last {self._in_flight} of this ParallelEnv did not complete (it raised or "
                "was interrupted), so the sub-envs' states are not known: call env.reset() "
                "before stepping again."
            )
        active = self._rows(rows)
        for leaf, view in self._input:
            value = inputs.get(leaf.key)
            if value is not None:
                np.copyto(view, np.asarray(value).reshape(view.shape), casting="unsafe")
        self._write_rows(active)
        workers = self._workers_of(active)
        if active is None:
            op = sig.STEP_RESET if fused else sig.STEP
        else:
            op = sig.STEP_RESET_ROWS if fused else sig.STEP_ROWS
        self._in_flight = "step"
        try:
            pending = pool.send(workers, op, "step")
        except BaseException:
            self._interrupted(set(workers))
            raise
        return _Job("step", pending, workers, fused=fused, rows=active, inputs=inputs)

    def _take_step(self, inputs: dict[Any, Any], rows: Any, fused: bool) -> _Job:
        job, self._fetched = self._fetched, None
        if job is not None:
            return job
        if self._job is not None and self._job.timed_out:
            self._idle("step")
        self._idle("step")
        return self._send_step(inputs, rows, fused)

    def _step_arrays(self, inputs: dict[Any, Any], rows: Any = None) -> dict[Any, Any]:
        if self._book is not None:
            self._refuse_sync("step()")
        out, _ = self._step_result(self._take_step(inputs, rows, False))
        return out

    def _step_reset_arrays(
        self, inputs: dict[Any, Any], rows: Any = None
    ) -> tuple[dict[Any, Any], dict[Any, Any] | None]:
        if self._book is not None:
            self._refuse_sync("step_and_maybe_reset()")
        return self._step_result(self._take_step(inputs, rows, True))

    def _step_result(self, job: _Job) -> tuple[dict[Any, Any], dict[Any, Any] | None]:
        answers = self._wait(job, self.timeout)
        restarted = self._raise_failures(answers, "step", restart=True)
        reset_by = [w for w, a in answers.items() if a.status == sig.DID_RESET]
        out = self._read("next", job.workers, answers)
        self._in_flight = None
        first = None
        if reset_by:
            first = self._read("reset_out", reset_by, answers)
            self._step_rows_into(first, out, [w for w in job.workers if w not in reset_by])
        if restarted:
            rows = np.zeros(self.num_envs, dtype=bool)
            for w in restarted:
                a, b = self._bounds[w]
                rows[a:b] = True
            truncate_rows(out, self._last.data, rows, self.env_keys.reward_keys)
            if job.fused:  # the truncated sub-envs start again, as the others that ended
                restart_first = self._reset_now(restarted)
                if first is None:
                    first = restart_first
                    self._step_rows_into(first, out, [w for w in job.workers if w not in restarted])
                else:
                    first = _merge(first, restart_first, rows)
        self._last.remember(out, job.rows)
        if first is not None:
            ended = self.env_keys.outputs.raw_ended(out, job.rows)
            self._last.remember(first, None if ended is True else ended)
        return out, first

    def _step_rows_into(
        self, first: dict[Any, Any], out: dict[Any, Any], workers: list[int]
    ) -> None:
        """Give ``first`` (a reset output read whole) the step's rows of ``workers``, which
        reset nothing: the next input is then ``first`` as it is."""
        for w in workers:
            a, b = self._bounds[w]
            for key, value in first.items():
                step = out.get(key)
                if step is not None and step.shape == value.shape:
                    value[a:b] = step[a:b]

    def _reset_now(self, workers: list[int]) -> dict[Any, Any]:
        """A synchronous reset of every sub-env of ``workers`` (rebuilt workers in a fused
        step), read whole."""
        pending = self._pool.send(workers, sig.RESET, "reset")
        answers = self._wait(_Job("reset", pending, workers), self.timeout)
        self._raise_failures(answers, "reset", restart=False)
        return self._read("reset_out", workers, answers)

    # ---------------------------------------------------------------- the hooks: reset
    def _send_reset(self, rows: np.ndarray | None, kwargs: dict[str, Any]) -> _Job:
        pool = self._ready_pool()
        if rows is not None and self._in_flight is not None:
            raise HubError(
                f"the last {self._in_flight} of this ParallelEnv did not complete (it raised or "
                "was interrupted), so the sub-envs' states are not known: a partial reset "
                "cannot follow it; call env.reset() (every sub-env) first."
            )
        self._write_rows(rows)
        workers = self._workers_of(rows)
        self._in_flight = "reset"
        try:
            if kwargs:
                seed = kwargs.get("seed")

                def options(w: int) -> tuple[bool, dict[str, Any]]:
                    if seed is None:
                        return rows is not None, kwargs
                    return rows is not None, {**kwargs, "seed": seed + self._bounds[w][0]}

                pending = pool.send_control(workers, "reset", options)
            else:
                pending = pool.send(workers, sig.RESET if rows is None else sig.RESET_ROWS, "reset")
        except BaseException:
            self._interrupted(set(workers))
            raise
        return _Job("reset", pending, workers, rows=rows, kwargs=kwargs)

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict[Any, Any]:
        if self._book is not None:
            return self._async_reset(rows, dict(kwargs))
        job, self._fetched = self._fetched, None
        if job is None:
            if self._job is not None and self._job.timed_out:
                self._drop_timed_out()
            self._idle("reset")
            job = self._send_reset(self._rows(rows), kwargs)
        answers = self._wait(job, self.timeout)
        failed = self._raise_failures(answers, "reset", restart=True)
        if failed:  # the rebuilt workers reset once more; a second failure raises
            retry = self._send_reset(job.rows, job.kwargs or {})
            retry.workers = failed
            answers = {**answers, **self._wait(retry, self.timeout)}
            self._raise_failures(answers, "reset", restart=False)
        out = self._read("reset_out", job.workers, answers)
        self._last.remember(out, job.rows)
        self._in_flight = None
        return out

    # ---------------------------------------------------------------- reading
    def _read(
        self, group: str, workers: list[int], answers: Mapping[int, Answer]
    ) -> dict[Any, np.ndarray]:
        """Copy a group (``"next"`` or ``"reset_out"``) out of shared memory into arrays this
        process owns (the buffers are overwritten by the next call): the entries the first of
        ``workers`` wrote, and the non-tensor entries that came with their ``answers``."""
        leaves = self._next if group == "next" else self._reset_out
        flags = self._views.present_row(workers[0]) if workers else None
        data = {}
        for leaf, view in leaves:
            if flags is not None and leaf.flag >= 0 and not flags[leaf.flag]:
                continue
            data[leaf.key] = view.copy()
        for key in self._views.layout.side.get(group, ()):
            values = self._side_values(group, key, workers, answers)
            if values is not None:
                data[key] = values
        return data

    def _side_values(
        self, group: str, key: Any, workers: list[int], answers: Mapping[int, Answer]
    ) -> np.ndarray | None:
        """One non-tensor entry of ``group`` as an object array with a value per sub-env: the
        rows of ``workers`` from their answers, the others their last value (``None`` when
        the entry came with no answer)."""
        values = None
        for w in workers:
            answer = answers.get(w)
            if answer is None or answer.failed or not answer.payload:
                continue
            got = answer.payload.get(group, {}).get(key)
            if got is None:
                continue
            if values is None:
                values = object_rows(self._last.data.get(key), self.num_envs)
            first = self._bounds[w][0]
            for i, value in enumerate(got):
                values[first + i] = value
        return values

    # ---------------------------------------------------------------- async use
    def step_send(self, tensordict: TensorDictBase) -> None:
        """Start a step; :meth:`step_fetch` returns its result.

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(2, CountingEnv)
            >>> env.step_send(env.rand_action(env.reset()))
            >>> env.step_fetch(timeout=30)["next", "observation"].squeeze(-1).tolist()
            [1, 1]
            >>> env.close()

        In first-ready async mode (``batch_size``), steps the envs of ``tensordict["env_id"]``
        (see :mod:`hub.batching.parallel_async`).
        """
        if self._book is not None:
            self._refuse_closed("step_send")
            return self._async_send(tensordict)
        self._idle("step_send")
        self.check_step_input(tensordict, "step_send")
        keys = self.env_keys
        inputs = {
            k: v.numpy(force=True) for k, v in tensordict.items(True, True) if k in keys.input_keys
        }
        step_mask = tensordict.get("_step", None)
        rows = None if step_mask is None else step_mask.reshape(self.num_envs, -1).any(-1).numpy()
        job = self._send_step(inputs, rows, fused=False)
        job.tensordict = tensordict
        self._job = job

    def step_fetch(self, timeout: float | None = None) -> TensorDictBase:
        """Wait (at most ``timeout`` seconds) for the step started by :meth:`step_send` (or left
        pending by a step that timed out) and return it, as :meth:`step` would: a TensorDict
        with ``"next"``. On :class:`hub.errors.WorkerTimeoutError` the step stays pending:
        fetch again to get it.

        In first-ready async mode (``batch_size``), returns the next ``batch_size`` envs to
        finish: their observations, ``"reward"``, done flags, ``"env_id"`` and ``"is_init"``
        (not under ``"next"``: each row is the env's latest data)."""
        if self._book is not None:
            self._refuse_closed("step_fetch")
            if timeout is not None and not timeout >= 0:
                raise ValueError(f"step_fetch(timeout=...) must be >= 0 seconds, got {timeout}.")
            out = self._async_fetch(timeout)
            return self.env_keys.outputs.build(out, None, "first-ready step")[0]
        job = self._take_job("step", timeout)
        self._fetched = job
        td = job.tensordict
        if td is None:  # a synchronous step that timed out: its input, rebuilt from its arrays
            td = TensorDict(
                {k: torch.as_tensor(v) for k, v in (job.inputs or {}).items()}, self.batch_size
            )
        return self.step(td)

    def _take_job(self, kind: str, timeout: float | None) -> _Job:
        self._refuse_closed(f"{kind}_fetch")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"{kind}_fetch(timeout=...) must be >= 0 seconds, got {timeout}.")
        job = self._job
        if job is None or job.kind != kind:
            pending = f" (a {job.kind} is pending: {job.kind}_fetch() collects it)" if job else ""
            raise AsyncCallError(
                f"{kind}_fetch() was called without a pending {kind}_send(){pending}; "
                f"call {kind}_send() first."
            )
        self._pool.collect(job.pending, timeout)  # raises WorkerTimeoutError; the job stays
        return job

    def reset_send(self, tensordict: TensorDictBase | None = None, **kwargs: Any) -> None:
        """Start a reset (full, or partial through ``"_reset"`` entries); :meth:`reset_fetch`
        returns its result.

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(2, CountingEnv)
            >>> env.reset_send()
            >>> env.reset_fetch(timeout=30)["observation"].squeeze(-1).tolist()
            [0, 0]
            >>> env.close()
        """
        keys = self._open_keys("reset_send")
        if self._book is not None:
            raise AsyncCallError(
                "reset_send() is not available in first-ready async mode: reset() returns the "
                "first batch_size envs to come back, and step_fetch() the others."
            )
        self._idle("reset_send")
        rows = None
        if tensordict is not None:
            self._check_batch(tensordict, "reset")
            flags = [tensordict.get(k, None) for k in keys.reset_keys]
            flags = [f for f in flags if f is not None]
            if flags:
                rows = np.zeros(self.num_envs, dtype=bool)
                for flag in flags:
                    rows |= flag.reshape(self.num_envs, -1).any(-1).numpy()
                if not rows.any():
                    self._job = _Job("reset", Pending("reset", set()), [], kwargs=kwargs)
                    self._job.tensordict = tensordict
                    return
                rows = None if rows.all() else rows
        job = self._send_reset(rows, kwargs)
        job.tensordict = tensordict
        self._job = job

    def reset_fetch(self, timeout: float | None = None) -> TensorDictBase:
        """Wait (at most ``timeout`` seconds) for the reset started by :meth:`reset_send` and
        return it, as :meth:`reset` would."""
        job = self._take_job("reset", timeout)
        self._job = None
        self._fetched = job if job.workers else None
        return self.reset(job.tensordict, **(job.kwargs or {}))

    # ---------------------------------------------------------------- seeds and attributes
    def _seed_envs(self, seed: int | None) -> None:
        self._idle("set_seed")
        pool = self._ready_pool()
        self._seed = seed
        payloads = [None if seed is None else seed + a for a, _ in self._bounds]
        answers = self._collect_control(pool, range(self.num_workers), "seed", payloads.__getitem__)
        self._raise_failures(answers, "set_seed", restart=False)

    def _collect_control(
        self, pool: WorkerPool, indices: Sequence[int], operation: str, payloads: Any
    ) -> dict[int, Answer]:
        """Send a control command and wait for the answers (the env's ``timeout``): workers
        that hang are killed (and rebuilt by the next call with ``restart_failed``)."""
        if self._book is not None:
            self._async_quiet()
        pending = Pending(operation, set())
        try:
            pending = pool.send_control(indices, operation, payloads)
            return pool.collect(pending, self.timeout)
        except WorkerTimeoutError as exc:
            if not self.restart_failed:
                self._unsynced.update(pending.waiting)
                raise WorkerTimeoutError(
                    f"{operation}: workers {sorted(pending.waiting)} did not answer within "
                    f"{self.timeout} s. The next call waits for them first; env.close() stops "
                    "them, and ParallelEnv(..., restart_failed=True) kills and rebuilds workers "
                    "that hang.",
                    worker=exc.worker,
                ) from None
            for w in sorted(pending.waiting):
                pending.answers[w] = pool.kill_hung(
                    w, f"did not answer within {self.timeout} s and was killed"
                )
            return pending.answers
        except BaseException:
            self._unsynced.update(indices)
            raise

    def _control(self, operation: str, payloads: Any, what: str) -> list[Any]:
        self._refuse_closed(what)
        self._idle(what)
        pool = self._ready_pool()
        answers = self._collect_control(pool, range(self.num_workers), operation, payloads)
        for w, answer in sorted(answers.items()):
            if answer.status == sig.ERROR and answer.payload[0] == "AttributeError":
                raise AttributeError(f"worker {w}: {answer.payload[1]}")
        self._raise_failures(answers, what, restart=False)
        return [answers[w].payload for w in range(self.num_workers)]

    def get_attr(self, name: str) -> list[Any]:
        """The attribute ``name`` of every sub-env, in order (methods come back as
        placeholders: call them with :meth:`call`).

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(2, CountingEnv, [{"max_steps": 3}, {"max_steps": 5}])
            >>> env.get_attr("max_steps")
            [3, 5]
            >>> env.close()
        """
        if not self._constructed:  # still constructing: nothing to forward to
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return [
            v for values in self._control("getattr", name, f"get_attr({name!r})") for v in values
        ]

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env (one value each, or one for all)."""
        per_env = self._per_env(values)
        bounds = self._bounds
        self._control(
            "setattr", lambda w: (name, per_env[bounds[w][0] : bounds[w][1]]), f"set_attr({name!r})"
        )

    def get_attr_at(self, indices: Sequence[int], name: str) -> list[Any]:
        """The attribute ``name`` of the sub-envs of ``indices`` only, in that order (the
        others are not read, and need not have it).

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(3, CountingEnv, [{"max_steps": k} for k in (3, 4, 5)])
            >>> env.get_attr_at([2, 0], "max_steps")
            [5, 3]
            >>> env.close()
        """
        local = split_indices(self._bounds, indices, self.num_envs)
        results = self._control(
            "getattr_at", lambda w: (local[w], name), f"get_attr({name!r}, indices=...)"
        )
        return join_by_index(self._bounds, local, results, indices)

    def set_attr_at(self, indices: Sequence[int], name: str, values: Sequence[Any]) -> None:
        """Set the attribute ``name`` of the sub-envs of ``indices`` only, one value each (the
        others keep theirs, or stay without it), as SB3's ``set_attr(..., indices=...)``.

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(3, CountingEnv)
            >>> env.set_attr_at([1], "tag", ["b"])
            >>> env.get_attr_at([1], "tag")
            ['b']
            >>> env.close()
        """
        local = split_indices(self._bounds, indices, self.num_envs)
        per_worker = split_values(self._bounds, local, indices, list(values))
        self._control(
            "setattr_at", lambda w: (local[w], name, per_worker[w]), f"set_attr({name!r}, ...)"
        )

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of every sub-env with the same arguments; one result each."""
        results = self._control("call", (name, args, kwargs), f"call({name!r})")
        return [v for values in results for v in values]

    def call_at(self, indices: Sequence[int], name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of the sub-envs of ``indices`` only, each in its worker;
        one result each, in the order of ``indices``.

        Example:
            >>> import hub
            >>> from hub.envs.builtin import CountingEnv
            >>> env = hub.ParallelEnv(3, CountingEnv)
            >>> env.call_at([2, 0], "__getattribute__", "max_steps")
            [10, 10]
            >>> env.close()
        """
        local = split_indices(self._bounds, indices, self.num_envs)
        results = self._control(
            "call_at", lambda w: (local[w], name, args, kwargs), f"call({name!r})"
        )
        return join_by_index(self._bounds, local, results, indices)

    # ---------------------------------------------------------------- life cycle
    def _close(self) -> None:
        self._job = self._fetched = None
        # drop every view of the shared file, so that its mapping (and the descriptor the
        # mapping holds) goes now, not when this object is garbage-collected
        self._views = self._input = self._next = self._reset_out = self._rows_view = None
        self._last.clear()
        if self._pool is not None:
            self._pool.shutdown()

    def worker_pids(self) -> list[int]:
        """The process ids of the workers still running."""
        return [] if self._pool is None else self._pool.alive_children()


def _unique(pairs: list[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    seen = {}
    for key, spec in pairs:
        seen.setdefault(key, spec)
    return list(seen.items())


def _merge(first: dict[Any, Any], more: dict[Any, Any], rows: np.ndarray) -> dict[Any, Any]:
    """``first`` with the rows of ``more`` where ``rows`` is set."""
    out = dict(first)
    for key, value in more.items():
        base = out.get(key)
        if base is None:
            out[key] = value
            continue
        mask = rows.reshape(rows.shape + (1,) * (value.ndim - 1))
        out[key] = np.where(mask, value, base)
    return out


def _main_guard_hint(env: ParallelEnv, answer: Answer) -> str:
    """What to do when a worker started with spawn/forkserver died at start-up re-running the
    main script (which builds a ParallelEnv again, and fails)."""
    if env._pool is None or env._pool.start_method == "fork" or answer.exitcode != 1:
        return ""
    return (
        f" Workers started with {env._pool.start_method!r} import your main script again: if it "
        'builds envs at module level, put that code under `if __name__ == "__main__":` '
        "(see docs/batching.md), or use start_method='fork' where the platform has it."
    )
