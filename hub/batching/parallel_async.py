"""First-ready async batches for :class:`hub.ParallelEnv` (``batch_size < num_envs``).

EnvPool's async semantics, over worker processes: ``reset()`` starts every env and returns the
first ``batch_size`` envs to come back; ``step_fetch()`` returns the next ``batch_size`` envs
to finish (each row with its ``"env_id"``, and ``"is_init"`` set where it starts an episode);
``step_send(td)`` steps exactly the envs of ``td["env_id"]``. An env whose episode ended (its row
had ``done`` set) restarts with the next send to it: that action is not used, and its next row is
the first observation of a new episode (``is_init``, reward 0). A worker steps all its envs
together, so a batch is made of whole workers (see :mod:`hub.batching.first_ready`), answered in
the order they finished.

A collector-style loop::

    env = hub.ParallelEnv(16, make_pong, batch_size=4)
    td = env.reset()                  # the first 4 envs back, with "env_id" and "is_init"
    for _ in range(1000):
        td = policy(td)               # writes "action" for those rows
        env.step_send(td)             # steps exactly those envs
        td = env.step_fetch()         # the next 4 envs to finish

:class:`FirstReadyMixin` holds the parent's side; the workers' side is
:meth:`hub.batching.worker.Worker.step_async`.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
from tensordict import TensorDictBase

from hub.batching import signals as sig
from hub.batching.first_ready import AsyncCallError, FirstReady
from hub.batching.pool import Answer, Pending
from hub.errors import WorkerError, WorkerTimeoutError

__all__ = ["FirstReadyMixin"]

#: the entries a worker writes as done flags (a restarted worker's rows set two of them)
_FLAGS = ("done", "terminated", "truncated")


class FirstReadyMixin:
    """The first-ready async mode of :class:`hub.ParallelEnv` (see the module docstring).

    It uses the env's worker pool (``_pool``), its shared ``"input"`` and ``"next"`` views,
    ``_bounds``, ``num_envs``, ``restart_failed``, ``timeout`` and ``_restart``.
    """

    _book: FirstReady | None = None
    _async_pending: Pending | None = None
    _async_last: dict[Any, np.ndarray] | None = None  # each env's last observations
    _async_entries: dict[int, Any] | None = None  # non-tensor entries of each worker's answer

    @property
    def is_async(self) -> bool:
        """Whether the env returns first-ready batches (``batch_size < num_envs``)."""
        return self._book is not None

    # ---------------------------------------------------------------- reset
    def _async_reset(self, rows: Any, kwargs: dict[str, Any]) -> dict[Any, Any]:
        """Reset every env; the first ``batch_size`` to come back, without rewards."""
        book = self._book
        seed = book.reset_seed(rows, kwargs)
        pool = self._ready_pool()
        self._async_drain()
        if seed is not None:
            self.set_seed(seed)
        workers = book.started_all()
        self._async_pending = pool.send(workers, sig.RESET_ASYNC, "reset")
        self._async_last = None
        out = self._async_take(self.timeout)
        out.pop("reward", None)
        return out

    def _async_drain(self) -> None:
        """Wait for the steps under way (the env's ``timeout``) and drop their results."""
        pending = self._async_pending
        if pending is None or not pending.waiting:
            return
        try:
            self._pool.collect(pending, self.timeout)
        except WorkerTimeoutError:
            self._book.fail("a step under way did not finish within the timeout")
            raise
        finally:
            self._async_pending = None

    # ---------------------------------------------------------------- send and fetch
    def _async_send(self, tensordict: TensorDictBase) -> None:
        book = self._book
        ids = book.send_ids(tensordict)
        workers = book.workers_of(ids)
        self.check_step_input(tensordict, "step_send")
        keys = self.env_keys
        for leaf, view in self._input:
            if leaf.key not in keys.input_keys:
                continue
            value = tensordict.get(leaf.key, None)
            if value is None:
                continue
            array = value.numpy(force=True)
            view[ids] = array.reshape((len(ids),) + view.shape[1:])
        pool = self._ready_pool()
        sent = pool.send(workers, sig.STEP_ASYNC, "step_fetch")
        pending = self._async_pending
        if pending is None:
            pending = self._async_pending = Pending("step_fetch", set())
        pending.waiting |= sent.waiting
        book.sent(workers)
        for w, answer in sent.answers.items():  # found dead while sending
            pending.answers[w] = answer
            self._async_answered(w, answer)

    def _async_fetch(self, timeout: float | None) -> dict[Any, Any]:
        return self._async_take(self.timeout if timeout is None else timeout)

    def _async_take(self, timeout: float | None) -> dict[Any, Any]:
        """Wait for the first workers to answer until they make a batch; their rows."""
        book = self._book
        book.check_fetch()
        deadline = None if timeout is None else time.monotonic() + timeout
        pending = self._async_pending
        while not book.has_batch():
            left = None if deadline is None else max(deadline - time.monotonic(), 0.0)
            answers = self._pool.collect_some(pending, left)
            for w in book.oldest_first(answers):
                self._async_answered(w, answers[w])
        workers = book.take()
        return self._async_rows(workers)

    def _async_answered(self, worker: int, answer: Answer) -> None:
        """Record ``worker``'s answer: its rows are ready, or it failed (rebuilt, and its envs
        reported truncated, with ``restart_failed``; else the error is raised)."""
        book = self._book
        if self._async_pending is not None:
            self._async_pending.answers.pop(worker, None)
        if not answer.failed:
            if self._views.layout.side:
                self._keep_entries(worker, answer.payload)
            book.answered(worker)
            return
        first, stop = self._bounds[worker]
        if answer.status == sig.ERROR:
            name, message, tb = answer.payload
            error = WorkerError(
                f"worker {worker} raised {name} during a first-ready step: {message} (worker "
                f"{worker} holds envs {first}-{stop - 1})",
                worker=worker,
                traceback=tb,
            )
        else:
            error = WorkerError(
                f"worker {worker} {self._pool.dead.get(worker, 'died')} during a first-ready "
                f"step (it held envs {first}-{stop - 1}).",
                worker=worker,
            )
        if not self.restart_failed:
            book.fail(f"worker {worker} failed")
            raise error
        self._restart(worker, str(error).split("\n", 1)[0])
        self._truncated_rows(worker)
        book.answered(worker)

    def _truncated_rows(self, worker: int) -> None:
        """Write a rebuilt worker's rows: its envs' last observations, truncated (the next
        send to them starts new episodes: a new worker restarts every env it holds)."""
        first, stop = self._bounds[worker]
        last = self._async_last or {}
        side = self._views.layout.side.get("next", ())
        if side:  # the entries that do not live in shared memory come from the last rows too
            none = [None] * (stop - first)
            entries = {k: last[k][first:stop].tolist() if k in last else none for k in side}
            self._keep_entries(worker, {"next": entries})
        for leaf, view in self._next:
            rows = view[first:stop]
            key = leaf.key
            if key in _FLAGS:
                rows[...] = key != "terminated"
            elif key in last:
                rows[...] = last[key][first:stop]
            else:
                rows[...] = 0

    def _async_rows(self, workers: list[int]) -> dict[Any, Any]:
        """The rows of ``workers`` from the shared ``"next"`` buffers, with their env ids."""
        ids = self._book.env_ids(workers)
        present = self._views.present_row(workers[0])  # the entries the workers wrote
        out: dict[Any, Any] = {}
        for leaf, view in self._next:
            if leaf.flag < 0 or present[leaf.flag]:
                out[leaf.key] = view[ids]  # a copy: the buffers are written again
        for key in self._views.layout.side.get("next", ()):
            values = self._async_side_rows(key, workers)
            if values is not None:
                out[key] = values
        out["env_id"] = ids.astype(np.int64)
        last = self._async_last
        if last is None:
            skip = ("reward", "is_init", *_FLAGS)
            last = self._async_last = {
                leaf.key: np.zeros_like(view) for leaf, view in self._next if leaf.key not in skip
            }
            for key in out.keys() - last.keys() - {"env_id", *skip}:
                last[key] = np.full(self.num_envs, None, dtype=object)
        for key, rows in last.items():
            rows[ids] = out[key]
        return out

    def _keep_entries(self, worker: int, entries: Any) -> None:
        """Keep the non-tensor entries of ``worker``'s answer until its rows are fetched."""
        if self._async_entries is None:
            self._async_entries = {}
        self._async_entries[worker] = entries

    def _async_side_rows(self, key: Any, workers: list[int]) -> np.ndarray | None:
        """A non-tensor entry of ``workers``' rows, from their answers (an object array)."""
        entries = self._async_entries or {}
        values: list[Any] = []
        for w in workers:
            got = ((entries.get(w) or {}).get("next") or {}).get(key)
            if got is None:
                return None
            values.extend(got)
        rows = np.empty(len(values), dtype=object)
        for i, value in enumerate(values):
            rows[i] = value
        return rows

    # ---------------------------------------------------------------- refusals
    def _refuse_sync(self, what: str) -> None:
        raise AsyncCallError(
            f"{what}: in first-ready async mode (batch_size < num_envs) each step returns "
            "whichever envs finish first, so a step cannot be paired with its result: use "
            "env.step_send(td) and env.step_fetch() (see docs/batching.md, 'First-ready "
            "batches')."
        )

    def _async_quiet(self) -> None:
        """Before a control message (seeding, attributes): wait for the steps under way; their
        rows stay to be fetched."""
        pending = self._async_pending
        if pending is not None and pending.waiting:
            for w, answer in list(self._pool.collect(pending, self.timeout).items()):
                self._async_answered(w, answer)
