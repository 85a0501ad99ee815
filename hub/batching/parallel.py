"""``ParallelEnv``: one env per worker process, as one batched env.

Same API and same results as :class:`hub.SerialEnv` (identical rollouts for the same seeds), with
the sub-envs stepping in parallel. Step data goes through shared memory laid out from the specs;
each step or reset is one byte each way per worker (see :mod:`hub.batching.signals`);
``step_and_maybe_reset`` resets inside the workers, so a step that ends episodes still costs one
message per worker. A worker's exception re-raises here as :class:`hub.errors.WorkerError` with
its traceback; a dead worker is reported within a bounded time, never waited for forever.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = hub.ParallelEnv(2, CountingEnv, {"max_steps": 4})
    >>> env.max_steps
    [4, 4]
    >>> env.rollout(3)["next", "observation"].squeeze(-1).tolist()
    [[1, 2, 3], [1, 2, 3]]
    >>> env.close()
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

from hub.batching import signals as sig
from hub.batching.batched import BatchedEnvBase, EnvFactory, check_timeout, rows_where
from hub.batching.pool import Answer, Pending, WorkerPool
from hub.batching.shared_buffers import BufferLayout, SharedViews
from hub.envs._fast_td import fast_get, fast_set, fast_update, new_td
from hub.envs.base import EnvBase
from hub.envs.done import complete_done_flags
from hub.envs.reset_masks import read_reset_masks
from hub.envs.seeding import next_seed
from hub.envs.serial_ops import where_rows
from hub.errors import (
    ClosedEnvError,
    HubError,
    SpecMismatchError,
    WorkerError,
    WorkerTimeoutError,
)

__all__ = ["ParallelEnv", "AsyncCallError", "WorkerRestartWarning"]

# how long a wait may poll before it sleeps, and the longest average wait for which it does:
# longer than a tight loop's gaps with cheap envs (a CartPole step of 8 workers on 2 cores takes
# 0.4 ms), shorter than expensive steps (8 Pong workers: 2.6 ms), where polling costs the workers
# more CPU than the wake-ups it saves (measured: docs/batching.md)
SPIN_WAIT_S = 5e-4


class AsyncCallError(HubError, RuntimeError):
    """``step_send``/``step_fetch`` (or the reset pair) used out of order."""


class WorkerRestartWarning(RuntimeWarning):
    """A failed worker was rebuilt (``restart_failed=True``)."""


@dataclass
class _Job:
    """A step or reset sent to the workers, waiting for (or holding) their answers."""

    kind: str  # "step" or "reset"
    pending: Pending
    rows: list[int]
    tensordict: TensorDictBase | None
    fused: bool = False  # a step that resets inside the workers
    full: bool = True  # a reset of whole sub-envs, without input data
    kwargs: dict[str, Any] | None = None
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


class ParallelEnv(BatchedEnvBase):
    """Run ``num_workers`` envs in worker processes as one env of batch size ``[num_workers]``.

    Args:
        num_workers: the number of worker processes (one sub-env each).
        create_env_fn: builds one env (or one callable per worker). With ``spawn`` or
            ``forkserver`` it must pickle: a module-level function, a class, or a
            ``functools.partial`` of one.
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one per
            worker).
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs in this process (see
            :class:`hub.EnvBase`; a non-finite reward then raises).
        start_method: ``"fork"``, ``"spawn"`` or ``"forkserver"`` (default: ``fork`` when this
            process runs one Python thread and the platform has it, else ``forkserver``, else
            ``spawn``; see ``docs/batching.md`` for the measurements).
        restart_failed: rebuild a worker that raises or dies (its env is created and seeded
            again), warn with :class:`WorkerRestartWarning` and count it in ``restarts``; the
            failed step reports that sub-env's episode as truncated. Without it, the failure
            raises :class:`hub.errors.WorkerError`.
        timeout: seconds that ``step``, ``reset`` and the other synchronous calls wait for the
            workers before raising :class:`hub.errors.WorkerTimeoutError` (``None``: as long as
            they are alive; a dead worker is always reported).
        start_timeout: the same for building the envs in the workers (at start-up and restarts).
        shutdown_timeout: seconds ``close()`` gives the workers to exit before killing them.
        spin_wait: seconds a waiting process (this one for the workers' answers, a worker for
            its next command) keeps polling, giving its core away between polls, before it
            sleeps; a process whose waits last longer than this on average sleeps at once.
            Waking a sleeping process is most of a small env's round trip; a loop that steps
            again within this time never waits for a wake-up. ``0`` always sleeps at once (see
            ``docs/batching.md``).

    Attributes:
        restarts: how many times each worker was rebuilt.
        start_method: the start method in use.

    ``step_send(td)`` / ``step_fetch(timeout=None)`` and ``reset_send(td=None)`` /
    ``reset_fetch(timeout=None)`` split a step or a reset in two, so that the parent can work
    while the workers step.
    """

    def __init__(
        self,
        num_workers: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        device: Any = None,
        checks: bool = False,
        start_method: str | None = None,
        restart_failed: bool = False,
        timeout: float | None = None,
        start_timeout: float | None = None,
        shutdown_timeout: float = 3.0,
        spin_wait: float = SPIN_WAIT_S,
        spec_locked: bool = True,
    ) -> None:
        self.restart_failed = restart_failed
        self.timeout = timeout
        self.start_timeout = check_timeout("start_timeout", start_timeout)
        self._start_method = start_method
        self._shutdown_timeout = shutdown_timeout
        if spin_wait < 0:
            raise ValueError(f"spin_wait must be >= 0 seconds, got {spin_wait}.")
        self._spin_wait = float(spin_wait)
        self._pool: WorkerPool | None = None
        self._views: SharedViews | None = None
        self._descriptions: list[dict[str, Any]] = []
        self._job: _Job | None = None  # sent with *_send (or timed out), not fetched yet
        self._fetched: _Job | None = None  # answered, about to be read by _step / _reset
        self._prereset: set[int] | None = None  # workers that reset inside a fused step
        self._in_flight: str | None = None  # a step or reset sent and not returned yet
        self._unsynced: set[int] = set()  # workers whose pipes an interrupted call left unread
        self._fuse = False
        self._step_restarted = False  # the last step rebuilt a worker (its episode was cut)
        self._seeds: list[int | None] = []
        self.restarts: list[int] = []
        self._constructed = False
        super().__init__(
            num_workers,
            create_env_fn,
            create_env_kwargs,
            device=device,
            checks=checks,
            spec_locked=spec_locked,
        )
        self._seeds = [None] * num_workers
        self.restarts = [0] * num_workers
        self._constructed = True

    # ---------------------------------------------------------------- start-up
    @property
    def start_method(self) -> str:
        """The start method of the worker processes."""
        return self._pool.start_method if self._pool is not None else str(self._start_method)

    def _meta_env(self) -> _WorkerSpecs:
        n = len(self._factories)
        pool = WorkerPool(
            self._factories,
            self._factory_kwargs,
            self._start_method,
            self._shutdown_timeout,
            self._spin_wait,
        )
        self._pool = pool
        try:
            for i in range(n):
                pool.start(i)
            answers = pool.collect(Pending("start-up", set(range(n))), self.start_timeout)
            self._raise_failures(answers, "start-up (building the env)", restart=False)
        except BaseException:
            pool.shutdown()
            raise
        self._descriptions = [answers[i].payload for i in range(n)]
        return _WorkerSpecs(self._descriptions[0])

    def _worker_specs(self) -> list[_WorkerSpecs]:
        return [_WorkerSpecs(d) for d in self._descriptions]

    def _ready_pool(self) -> WorkerPool:
        pool = self._pool
        if pool is None or pool.closed:
            raise ClosedEnvError(
                "this ParallelEnv is closed (its workers are stopped); build a new one."
            )
        if self._views is None:
            self._setup_buffers(pool)
        if self._unsynced:
            self._resync(pool)
        if pool.dead and self.restart_failed:
            for i in sorted(pool.dead):
                self._restart(i, f"worker {i} {pool.dead[i]}")
        return pool

    def _resync(self, pool: WorkerPool) -> None:
        """After an interrupted call: read and drop what the workers answered to it."""
        failed = pool.resync(sorted(self._unsynced), self.timeout)
        self._unsynced.clear()
        for i, answer in sorted(failed.items()):
            if answer.status != b"?":
                continue  # died: reported as dead by the next call
            if self.restart_failed:
                pool.kill_hung(i, f"did not answer within {self.timeout} s")
                continue
            self._unsynced.update(failed)
            raise WorkerTimeoutError(
                f"worker {i} is still busy with a call that was interrupted, {self.timeout} s "
                "later. env.close() stops the workers; ParallelEnv(..., restart_failed=True) "
                "kills and rebuilds workers that hang.",
                worker=i,
            )

    def _layout(self) -> BufferLayout:
        self._keys()

        def leaves(spec: Any) -> list[tuple[Any, Any]]:
            return [(k, spec[k]) for k in spec.keys(include_nested=True, leaves_only=True)]

        obs = leaves(self.full_observation_spec)
        reward = leaves(self.full_reward_spec)
        done = leaves(self.full_done_spec)
        state = leaves(self.full_state_spec)
        action = leaves(self.full_action_spec)
        flags = [
            (reset_key, self.full_done_spec[done_key])
            for reset_key, done_key in zip(self._reset_keys, self._done_flag_keys)
        ]
        groups = {
            "input": _unique(action + state),
            "next": _unique(obs + reward + done + state),
            "reset_in": _unique(obs + done + state + flags),
            "reset_out": _unique(obs + done + state),
        }
        return BufferLayout.from_groups(
            tuple(self.batch_size), groups, optional=frozenset(("next", "reset_in", "reset_out"))
        )

    def _setup_buffers(self, pool: WorkerPool) -> None:
        layout = self._layout()
        views = pool.buffers.map(layout)
        answers = pool.collect(
            pool.send_control(range(self.num_workers), "layout", layout), self.start_timeout
        )
        self._raise_failures(answers, "setting up the shared buffers", restart=False)
        self._views = views
        self._input = views.leaves("input")
        self._next = views.leaves("next")
        self._reset_in = views.leaves("reset_in")
        self._reset_out = views.leaves("reset_out")
        self._fusable = len(self._done_prefixes) == 1
        self._flat_keys = all(
            type(leaf.key) is str for group in layout.groups.values() for leaf in group
        )

    # ---------------------------------------------------------------- failures
    def _raise_failures(self, answers: dict[int, Answer], what: str, restart: bool) -> list[int]:
        """Raise the first failure among ``answers`` as a WorkerError, or (with
        ``restart_failed``) rebuild the failed workers and return their indices."""
        errors = []
        for i in sorted(answers):
            answer = answers[i]
            if answer.status == sig.ERROR:
                name, message, tb = answer.payload
                errors.append(
                    WorkerError(
                        f"worker {i} raised {name} during {what}: {message}",
                        worker=i,
                        traceback=tb,
                    )
                )
            elif answer.died:
                errors.append(
                    WorkerError(
                        f"worker {i} {self._pool.dead.get(i, 'died')} during {what} "
                        f"(exit code {answer.exitcode}).",
                        worker=i,
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
        seed = self._seeds[index]
        if seed is not None:
            seed = next_seed(seed + (self.restarts[index] << 40))
            answers = pool.collect(pool.send_control([index], "seed", (seed, False)), self.timeout)
            self._raise_failures(answers, f"seeding restarted worker {index}", restart=False)
        warnings.warn(
            f"ParallelEnv worker {index} was rebuilt after a failure ({reason}); it has been "
            f"restarted {self.restarts[index]} time(s).",
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
                for i in sorted(job.pending.waiting):
                    job.pending.answers[i] = self._pool.kill_hung(
                        i, f"did not answer within {timeout} s and was killed"
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
            self._interrupted(job.pending.waiting | set(job.pending.answers) | set(job.rows))
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
        self._prereset = None

    # ---------------------------------------------------------------- step
    def _write_inputs(self, tensordict: TensorDictBase) -> None:
        for leaf, view in self._input:
            value = fast_get(tensordict, leaf.key)
            if value is None:
                value = tensordict.get(leaf.key)  # raises the usual KeyError
            if value.shape != view.shape:
                raise SpecMismatchError(
                    leaf.key,
                    f"shape {list(view.shape)}",
                    f"shape {list(value.shape)}",
                    where="step",
                )
            view.copy_(value)

    def _step_send(self, tensordict: TensorDictBase, fused: bool) -> _Job:
        pool = self._ready_pool()
        if self._in_flight is not None or self._prereset:
            self._refuse_step()
        active = self._step_workers(tensordict)
        rows = rows_where(active, self.num_workers)
        self._write_inputs(tensordict)
        op = sig.STEP_RESET if fused else sig.STEP
        self._in_flight = "step"
        try:
            pending = pool.send(rows, op, "step")
        except BaseException:
            self._interrupted(set(rows))
            raise
        return _Job("step", pending, rows, tensordict, fused=fused)

    def _refuse_step(self) -> None:
        if self._prereset:
            rows = sorted(self._prereset)
            raise AsyncCallError(
                f"sub-envs {rows} ended their episode in the step that step_fetch() returned and "
                "were reset in their workers: reset them before the next step, e.g. "
                "td = env.step_mdp(data); td['_reset'] = data['next', 'done']; env.reset(td) "
                "(or env.reset() for all)."
            )
        raise HubError(
            f"the last {self._in_flight} of this ParallelEnv did not complete (it raised or was "
            "interrupted), so the sub-envs' states are not known: call env.reset() before "
            "stepping again."
        )

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        job, self._fetched = self._fetched, None
        if job is None:
            self._idle("step")
            job = self._step_send(tensordict, self._fuse and self._fusable)
        return self._step_result(job, tensordict)

    def _step_result(self, job: _Job, tensordict: TensorDictBase) -> TensorDictBase:
        answers = self._wait(job, self.timeout)
        restarted = self._raise_failures(answers, "step", restart=True)
        if job.fused:
            self._prereset = {i for i, a in answers.items() if a.status == sig.DID_RESET}
        self._step_restarted = bool(restarted)
        out = self._read(self._next, job.rows)
        if restarted:
            _truncate_rows(out, tensordict, restarted, self._done_prefixes, self._reward_keys)
        out = self._output_device(out)
        self._in_flight = None
        return out

    def step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """Step, then reset the sub-envs whose episode ended, inside the workers (one message
        per worker and step). Same results as :meth:`hub.EnvBase.step_and_maybe_reset`."""
        self._fuse = True
        try:
            if self._lean_step_ok(tensordict):
                return self._lean_step_and_maybe_reset(tensordict)
            return super().step_and_maybe_reset(tensordict)
        finally:
            self._fuse = False
            self._prereset = None

    def _lean_step_ok(self, tensordict: TensorDictBase) -> bool:
        """Whether the common case holds: nothing pending, a plain TensorDict of the env's batch
        size stepping every worker, no checks or auto-reset to run in this process."""
        return (
            self._views is not None
            and self._job is None
            and self._fetched is None
            and self._in_flight is None
            and not self._unsynced
            and self._fusable
            and self._plain_step_ok(tensordict)
        )

    def _lean_step_and_maybe_reset(
        self, tensordict: TensorDictBase
    ) -> tuple[TensorDictBase, TensorDictBase]:
        """``EnvBase.step_and_maybe_reset`` for the common case (see :meth:`_lean_step_ok`),
        without the generic step's dispatch: the same checks of the actions, the same data."""
        self._check_actions(tensordict)
        next_td = self._step_result(self._step_send(tensordict, fused=True), tensordict)
        complete_done_flags(next_td, self._done_prefixes, self._done_shapes)
        fast_set(tensordict, "next", next_td)
        next_input = self.step_mdp(tensordict)
        if self._step_restarted:  # a rebuilt worker: the generic reset path
            self._reset_finished(next_input)
        elif self._prereset:  # a worker resets iff its episode ended
            self._merge_prereset(next_input)
        return tensordict, next_input

    def _merge_prereset(self, next_input: TensorDictBase) -> None:
        """Write the rows of the workers that reset inside the step just taken into
        ``next_input``: what ``_reset_finished`` gives (the same partial read of the reset
        buffers), without reading the done flags back or going through ``reset``."""
        rows, self._prereset = sorted(self._prereset), None
        out = self._output_device(self._read(self._reset_out, rows, next_input, partial=True))
        complete_done_flags(out, self._done_prefixes, self._done_shapes)
        fast_update(next_input, out)

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
        """
        if self._closed:
            raise self._closed_error("step_send")
        self._idle("step_send")
        self._keys()
        self._check_batch(tensordict, "step")
        self._check_actions(tensordict)
        self._job = self._step_send(tensordict, fused=False)

    def step_fetch(self, timeout: float | None = None) -> TensorDictBase:
        """Wait (at most ``timeout`` seconds) for the step started by :meth:`step_send` (or left
        pending by a step that timed out) and return it, as :meth:`step` would: a TensorDict
        with ``"next"``. On :class:`hub.errors.WorkerTimeoutError` the step stays pending: fetch
        again to get it.

        A ``step_and_maybe_reset`` that timed out reset the sub-envs whose episode ended inside
        their workers: reset those (``"_reset"`` from the returned ``("next", "done")``) before
        the next step."""
        job = self._take_job("step", timeout)
        self._fetched = job
        return EnvBase.step(self, job.tensordict)

    def _take_job(self, kind: str, timeout: float | None) -> _Job:
        if self._closed:
            raise self._closed_error(f"{kind}_fetch")
        if timeout is not None and not timeout >= 0:
            raise ValueError(f"{kind}_fetch(timeout=...) must be >= 0 seconds, got {timeout}.")
        job = self._job
        if job is None or job.kind != kind:
            pending = f" (a {job.kind} is pending: {job.kind}_fetch() collects it)" if job else ""
            raise AsyncCallError(
                f"{kind}_fetch() was called without a pending {kind}_send(){pending}; "
                f"call {kind}_send() first."
            )
        self._wait(job, timeout, sync=False)
        return job

    # ---------------------------------------------------------------- reset
    def _reset_send(
        self, tensordict: TensorDictBase | None, kwargs: dict[str, Any], skip: set[int]
    ) -> _Job:
        pool = self._ready_pool()
        need = self._reset_workers(tensordict)
        full = need is None
        if not full and self._in_flight is not None:
            raise HubError(
                f"the last {self._in_flight} of this ParallelEnv did not complete (it raised or "
                "was interrupted), so the sub-envs' states are not known: a partial reset "
                "cannot follow it; call env.reset() (every sub-env) first."
            )
        rows = rows_where(need, self.num_workers)
        targets = [i for i in rows if i not in skip]
        if not full and targets:
            self._write_reset_inputs(tensordict)
        self._in_flight = "reset"
        try:
            if kwargs:
                pending = pool.send_control(targets, "reset", (not full, kwargs))
            else:
                pending = pool.send(targets, sig.RESET if full else sig.RESET_PARTIAL, "reset")
        except BaseException:
            self._interrupted(set(targets))
            raise
        return _Job("reset", pending, rows, tensordict, full=full, kwargs=kwargs)

    def _write_reset_inputs(self, tensordict: TensorDictBase) -> None:
        present = self._views.present
        for leaf, view in self._reset_in:
            value = tensordict.get(leaf.key, None)
            if not isinstance(value, torch.Tensor) or value.shape != view.shape:
                present[:, leaf.flag] = False
                continue
            view.copy_(value)
            present[:, leaf.flag] = True

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        job, self._fetched = self._fetched, None
        if job is None and self._job is not None and self._job.timed_out:
            self._drop_timed_out()
        prereset = self._prereset
        if job is None:
            self._idle("reset")
            need = self._reset_workers(tensordict)
            if prereset and need is not None:
                missing = sorted(i for i in prereset if not need[i])
                if missing:
                    raise AsyncCallError(
                        f"sub-envs {missing} ended their episode in the last step and were "
                        "reset in their workers, but this partial reset leaves them out: mark "
                        "them in '_reset' as well (their 'done' flags), or call env.reset()."
                    )
            job = self._reset_send(tensordict, kwargs, prereset or set())
        self._prereset = None
        answers = self._wait(job, self.timeout)
        failed = self._raise_failures(answers, "reset", restart=True)
        if failed:  # the rebuilt workers reset once more; a second failure raises
            retry = self._reset_send(tensordict, kwargs, set(job.rows) - set(failed))
            self._raise_failures(self._wait(retry, self.timeout), "reset", restart=False)
        out = self._read(self._reset_out, job.rows, tensordict, partial=not job.full)
        out = self._output_device(out)
        self._in_flight = None
        return out

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
        if self._closed:
            raise self._closed_error("reset_send")
        self._idle("reset_send")
        self._keys()
        pool_job: _Job | None = None
        if tensordict is not None:
            self._check_batch(tensordict, "reset")
            masks = read_reset_masks(tensordict, self._done_prefixes)
            if masks is not None and not any(bool(m.any()) for m in masks.values()):
                pool_job = _Job("reset", Pending("reset", set()), [], tensordict, full=False)
        if pool_job is None:
            pool_job = self._reset_send(tensordict, kwargs, set())
        pool_job.kwargs = kwargs
        self._job = pool_job

    def reset_fetch(self, timeout: float | None = None) -> TensorDictBase:
        """Wait (at most ``timeout`` seconds) for the reset started by :meth:`reset_send` and
        return it, as :meth:`reset` would."""
        job = self._take_job("reset", timeout)
        self._fetched = job if job.rows or job.full else None
        return EnvBase.reset(self, job.tensordict, **(job.kwargs or {}))

    # ---------------------------------------------------------------- reading
    def _read(
        self,
        leaves: list[Any],
        rows: list[int],
        previous: TensorDictBase | None = None,
        partial: bool = False,
    ) -> TensorDictBase:
        """Copy a group out of shared memory (the entries the first of ``rows`` wrote) into
        tensors the caller owns: the buffers are overwritten by the next step.

        With ``partial``, only ``rows`` come from the workers; the other rows take the values of
        ``previous`` (zeros where it has no such entry), as ``SerialEnv`` gives them.
        """
        n = self.num_workers
        flags = self._views.present_row(rows[0]) if rows else None
        mask = None
        if partial and len(rows) < n:
            mask = torch.zeros(n, dtype=torch.bool)
            mask[rows] = True
        data = {}
        for leaf, view in leaves:
            if flags is not None and leaf.flag >= 0 and not flags[leaf.flag]:
                continue
            if mask is None:
                data[leaf.key] = view.clone()
                continue
            old = None if previous is None else fast_get(previous, leaf.key)
            if isinstance(old, torch.Tensor) and old.shape == view.shape:
                if old.dtype != view.dtype or old.device != view.device:
                    old = old.to(device=view.device, dtype=view.dtype)
                data[leaf.key] = where_rows(mask, view, old)
            else:
                value = view.clone()
                value[~mask] = 0
                data[leaf.key] = value
        if self._flat_keys:
            return new_td(data, self.batch_size, None)
        return TensorDict(data, batch_size=self.batch_size)

    # ---------------------------------------------------------------- seeds and attributes
    def _seed_workers(self, seed: int | None, static_seed: bool) -> int | None:
        self._idle("set_seed")
        pool = self._ready_pool()
        for i in range(self.num_workers):
            self._seeds[i] = seed
            answers = self._collect_control(pool, [i], "seed", (seed, static_seed))
            self._raise_failures(answers, "set_seed", restart=False)
            seed = answers[i].payload
        return seed

    def _collect_control(
        self, pool: WorkerPool, indices: Sequence[int], operation: str, payloads: Any
    ) -> dict[int, Answer]:
        """Send a control command and wait for the answers (the env's ``timeout``): workers
        that hang are killed (and rebuilt by the next call with ``restart_failed``)."""
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
            for i in sorted(pending.waiting):
                pending.answers[i] = pool.kill_hung(
                    i, f"did not answer within {self.timeout} s and was killed"
                )
            return pending.answers
        except BaseException:
            self._unsynced.update(indices)
            raise

    def _control(self, operation: str, payloads: Any, what: str) -> list[Any]:
        self._idle(what)
        pool = self._ready_pool()
        answers = self._collect_control(pool, range(self.num_workers), operation, payloads)
        for i, answer in sorted(answers.items()):
            if answer.status == sig.ERROR and answer.payload[0] == "AttributeError":
                raise AttributeError(f"worker {i}: {answer.payload[1]}")
        self._raise_failures(answers, what, restart=False)
        return [answers[i].payload for i in range(self.num_workers)]

    def get_attr(self, name: str) -> list[Any]:
        """The attribute ``name`` of every sub-env, in worker order (methods come back as
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
        return self._control("getattr", name, f"get_attr({name!r})")

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of every sub-env (one value each, or one for all)."""
        per_worker = self._per_worker(values)
        self._control("setattr", lambda i: (name, per_worker[i]), f"set_attr({name!r})")

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        """Call the method ``name`` of every sub-env with the same arguments; one result each."""
        return self._control("call", (name, args, kwargs), f"call({name!r})")

    # ---------------------------------------------------------------- life cycle
    def _close(self) -> None:
        self._job = self._fetched = None
        # drop every view of the shared file, so that its mapping (and the descriptor the
        # mapping holds) goes now, not when this object is garbage-collected
        self._views = self._input = self._next = self._reset_in = self._reset_out = None
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


def _truncate_rows(
    out: TensorDictBase,
    previous: TensorDictBase,
    rows: list[int],
    prefixes: list[tuple[str, ...]],
    reward_keys: list[Any],
) -> None:
    """The step of a rebuilt worker: its episode is cut where it was (previous observations,
    zero reward, ``truncated`` and ``done`` set, ``terminated`` unset)."""
    for key in out.keys(include_nested=True, leaves_only=True):
        value = out.get(key)
        old = previous.get(key, None)
        for i in rows:
            if key in reward_keys or not isinstance(old, torch.Tensor) or old.shape != value.shape:
                value[i] = 0
            else:
                value[i] = old[i]
    for prefix in prefixes:
        for name, flag in (("done", True), ("truncated", True), ("terminated", False)):
            key = prefix + (name,) if prefix else name
            value = out.get(key, None)
            if value is not None:
                for i in rows:
                    value[i] = flag
