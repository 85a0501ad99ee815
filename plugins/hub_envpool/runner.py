"""``PoolRunner``: the step path of an EnvPool env, from hub actions to hub output dicts.

It calls EnvPool's C++ ``send``/``recv``/``reset`` (:func:`hub_envpool.compat.raw_calls`),
reads the flat list of arrays they return through a :class:`~hub_envpool.specs.StateLayout`,
and turns the arrays into tensors with :func:`torch.from_numpy`: EnvPool allocates a new buffer
for every output (hub checks this in its tests), so no copy is needed. No spec work, no dict
rebuilding from EnvPool's Python layer, no per-env Python loop on the step path.

A step of every env that ends episodes sends the restart of those envs at once (a step to
them: EnvPool's own autoreset), before it returns
(:meth:`PoolRunner.step`): EnvPool's threads reset them while hub builds the step's output and the
next input, and the reset that follows (:meth:`PoolRunner.reset_ended`, or any reset of those
envs) only collects the result. Any other call first collects it and keeps it for the reset of
those envs: each env is still reset once per reset asked for.

Example:
    >>> import envpool, numpy as np
    >>> from hub_envpool import compat
    >>> from hub_envpool.specs import state_layout
    >>> pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=2)
    >>> runner = PoolRunner(state_layout(pool._state_keys, dict_obs=False), num_workers=2)
    >>> runner.attach(compat.raw_calls(pool))
    >>> sorted(runner.reset(None))
    ['done', 'observation', 'terminated', 'truncated']
    >>> runner.step(np.zeros(2, np.int32), None)["reward"].shape
    torch.Size([2, 1])
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import torch

from hub_envpool.autoreset import AsyncBook, PendingResets, restart_mask
from hub_envpool.compat import RawCalls
from hub_envpool.specs import StateLayout

__all__ = ["PoolRunner"]

Output = dict[Any, torch.Tensor]

from_numpy = torch.from_numpy


class PoolRunner:
    """Resets and steps one EnvPool object; returns hub entries as dicts of tensors.

    Args:
        layout: where each entry sits in EnvPool's output list.
        num_workers: EnvPool's ``num_envs``.
        batch_size: EnvPool's ``batch_size`` (below ``num_workers``: async mode).
        unbatched: drop the batch dim (one env, hub batch size ``[]``).
        device: move outputs there (``None`` or CPU: zero-copy tensors).
        frame_skip: repeat each action this many times (sync mode).
    """

    def __init__(
        self,
        layout: StateLayout,
        *,
        num_workers: int,
        batch_size: int | None = None,
        unbatched: bool = False,
        device: torch.device | None = None,
        frame_skip: int = 1,
    ) -> None:
        self.layout = layout
        self.num_workers = num_workers
        self.batch_size = batch_size or num_workers
        self.is_async = self.batch_size < num_workers
        self.unbatched = unbatched
        self.move = None if device is None or device.type == "cpu" else device
        self.frame_skip = frame_skip
        self.flag_shape = (1,) if unbatched else (self.batch_size, 1)
        self.all_ids = np.arange(num_workers, dtype=np.int32)
        self.obs_slots = layout.observations
        # the slots a reset's rows are read from (see merge): observations and env ids
        self.reset_slots = (*(i for _, i in layout.observations), layout.env_id)
        self.raw: RawCalls | None = None
        self.inflight: np.ndarray | None = None  # env ids whose reset was sent, not received
        self.detach()

    # ------------------------------------------------------------------ the pool
    def attach(self, raw: RawCalls) -> None:
        """Use the C++ calls of a (new) pool; every env must be reset before it is stepped."""
        self.raw = raw
        self.inflight = None
        self.last_action: np.ndarray | None = None  # a restart sends it to ended envs
        self.fresh: list[Any] | None = None  # an early reset's output, received, not yet used
        self.pending = PendingResets(self.num_workers)
        self.book = AsyncBook(self.num_workers, self.batch_size) if self.is_async else None
        self.last: list[Any] | None = None
        self.stepped_all = False  # the last call was a step of every env (see reset_ended)

    def detach(self) -> None:
        """Forget the pool (it is about to be closed or rebuilt): first collect a reset still
        under way, so that EnvPool is not closed in the middle of it."""
        if self.inflight is not None and self.raw is not None:
            with contextlib.suppress(Exception):  # a broken pool is being closed anyway
                self.raw.recv()
        self.raw = None
        self.inflight = None
        self.fresh = None
        self.pending = PendingResets(self.num_workers)
        self.book = AsyncBook(self.num_workers, self.batch_size) if self.is_async else None
        self.last = None
        self.stepped_all = False

    # ------------------------------------------------------------------ arrays -> tensors
    def tensor(self, array: np.ndarray) -> torch.Tensor:
        """A tensor on the array's memory (the first row only when unbatched)."""
        tensor = torch.from_numpy(array)
        if self.unbatched and tensor.ndim > 1:
            tensor = tensor[0]
        return tensor if self.move is None else tensor.to(self.move, non_blocking=True)

    def flag(self, array: np.ndarray) -> torch.Tensor:
        """One value per env shaped like hub's flags and rewards (``[N, 1]``; ``[1]`` unbatched)."""
        tensor = torch.from_numpy(array.reshape(self.flag_shape))
        return tensor if self.move is None else tensor.to(self.move, non_blocking=True)

    def no_flags(self, out: Output) -> Output:
        """Add the done flags of a reset (all ``False``) to ``out``."""
        return self._add_flags(out, np.zeros((3, *self.flag_shape), dtype=bool))

    def _add_flags(self, out: Output, flags: np.ndarray) -> Output:
        """Add ``flags`` (done, terminated, truncated: one buffer, three entries) to ``out``."""
        tensor = from_numpy(flags) if self.move is None else from_numpy(flags).to(self.move)
        out["done"], out["terminated"], out["truncated"] = tensor.unbind(0)
        return out

    def observations(self, states: list[Any]) -> Output:
        """The observation entries of an output list."""
        tensor = self.tensor
        return {key: tensor(states[i]) for key, i in self.obs_slots}

    def merge(
        self, rows: list[Any], base: list[Any] | None, *, observations_only: bool = False
    ) -> list[Any]:
        """Full-batch arrays from the rows of a partial call: ``base`` (else zeros) with the rows
        EnvPool returned written in at their env ids (the observations only, for a reset)."""
        layout = self.layout
        order = rows[layout.env_id]
        merged: list[Any] = [None] * len(rows)
        slots = [i for _, i in self.obs_slots]
        if not observations_only:
            slots += [layout.reward, layout.done, layout.trunc]
        for i in slots:
            row = rows[i]
            if base is not None and base[i] is not None:
                full = np.array(base[i], copy=True)
            else:
                full = np.zeros((self.num_workers, *row.shape[1:]), dtype=row.dtype)
            full[order] = row
            merged[i] = full
        merged[layout.env_id] = self.all_ids
        return merged

    # ------------------------------------------------------------------ sync mode
    def reset(self, mask: np.ndarray | None, inputs: dict[Any, np.ndarray] | None = None) -> Output:
        """Reset the envs of ``mask`` (``None``: all) and return the observations of all.

        ``inputs`` (a partial reset's input entries, as arrays) gives the rows of the envs that
        are not reset, where it holds an entry of the output's shape and dtype; the envs' last
        output gives them otherwise. The done flags of those rows come from ``inputs`` too
        (else ``False``).
        """
        raw = self.raw
        self.stepped_all = False
        if mask is None:
            if self.inflight is None and self.fresh is None:
                raw.reset(self.all_ids)
                states = raw.recv()
            else:  # some envs were reset early: the others now
                states = self.merge(self._reset_rows(self.all_ids), None, observations_only=True)
            self.pending.clear(None)
            self.last = states
            return self.no_flags(self.observations(states))
        ids = np.flatnonzero(mask).astype(np.int32)
        rows = self._reset_rows(ids)
        base = self._input_rows(inputs) if inputs else self.last
        states = self.merge(rows, base, observations_only=True)
        self.pending.clear(ids)
        self.last = states
        out = self.observations(states)
        return self.kept_flags(out, inputs, mask) if inputs else self.no_flags(out)

    def _reset_rows(self, ids: np.ndarray) -> list[Any]:
        """EnvPool's output rows for a reset of ``ids``: those of the reset that :meth:`step`
        sent early for the envs among ``ids``, and a new reset of the others. The early rows of
        envs not in ``ids`` are kept for their own reset: every env is reset once per request,
        as if nothing had been sent early (EnvPool draws each reset from the env's own seeded
        stream, so the data stays that of the calls the user made)."""
        inflight = self.inflight
        if inflight is not None and np.array_equal(inflight, ids):
            self.inflight = None
            return self.raw.recv()  # the common case: the reset of the envs that ended
        self._settle()
        fresh = self.fresh
        fresh_ids = None if fresh is None else fresh[self.layout.env_id]
        use = None if fresh is None else np.isin(fresh_ids, ids)
        if use is None or not use.any():
            return self._restart(ids)
        self.fresh = None if use.all() else self._rows_where(fresh, ~use)
        rows = self._rows_where(fresh, use)
        others = ids[~np.isin(ids, fresh_ids)]
        if others.size:
            rows = self._concat(rows, self._restart(others))
        return rows

    def _restart(self, ids: np.ndarray) -> list[Any]:
        """EnvPool's output rows for new episodes of ``ids``: the envs whose episode ended are
        sent a step, which EnvPool answers by restarting them as its own autoreset does (with
        ``episodic_life``, a lost life continues the game: its ``reset`` would start a new
        game); the others are reset."""
        ended = restart_mask(self.pending, ids, self.last_action)
        if not ended.any():
            self.raw.reset(ids)
            return self.raw.recv()
        self.raw.send([ids[ended], ids[ended], self.last_action[ids[ended]]])
        rows = self.raw.recv()
        if ended.all():
            return rows
        self.raw.reset(ids[~ended])
        return self._concat(rows, self.raw.recv())

    def _rows_where(self, rows: list[Any], keep: np.ndarray) -> list[Any]:
        """The observation and env id arrays of EnvPool's output ``rows`` at the rows ``keep``
        (``None`` in the other slots: a reset reads nothing else)."""
        out: list[Any] = [None] * len(rows)
        for i in self.reset_slots:
            out[i] = rows[i][keep]
        return out

    def _concat(self, rows: list[Any], more: list[Any]) -> list[Any]:
        """The observation and env id arrays of two outputs of resets, one after the other."""
        out: list[Any] = [None] * len(rows)
        for i in self.reset_slots:
            out[i] = np.concatenate([rows[i], more[i]])
        return out

    def _settle(self) -> None:
        """Collect a reset sent early and keep its rows for the reset of those envs: EnvPool
        must not be called before it is received."""
        if self.inflight is not None:
            self.inflight = None
            rows = self.raw.recv()
            self.fresh = rows if self.fresh is None else self._concat(self.fresh, rows)

    def reset_ended(self) -> Output | None:
        """Right after a step of every env: reset the envs whose episode ended in it and return
        the observations of all (the step's, with the reset envs' first ones) and the done
        flags (all ``False`` now); ``None`` when no episode ended. The step's own record of the
        ended envs drives it: no flag is read back from tensors.

        Raises:
            RuntimeError: when the last call was not a step of every env (a bug of the caller,
                which must check :attr:`stepped_all`).
        """
        if not self.stepped_all:
            raise RuntimeError("reset_ended() follows a step of every env (check stepped_all)")
        pending = self.pending
        if not pending.any:
            return None
        return self.reset(pending.mask.copy())

    def _input_rows(self, inputs: dict[Any, np.ndarray]) -> list[Any]:
        """``self.last`` with each observation slot replaced by its input array when that has
        the same shape and dtype."""
        base = list(self.last)
        for key, i in self.obs_slots:
            value = inputs.get(key)
            last = base[i]
            if value is not None and value.shape == last.shape and value.dtype == last.dtype:
                base[i] = value
        return base

    def kept_flags(self, out: Output, inputs: dict[Any, np.ndarray], mask: np.ndarray) -> Output:
        """Add the done flags of a partial reset: the inputs' for the envs not reset (``False``
        where the input lacks a flag), ``False`` for the envs reset."""
        flags = np.zeros((3, *self.flag_shape), dtype=bool)
        for row, name in enumerate(("done", "terminated", "truncated")):
            value = inputs.get(name)
            if value is not None and value.shape == self.flag_shape and value.dtype == bool:
                flags[row] = value
        flags[:, mask] = False
        return self._add_flags(out, flags)

    def step(self, action: np.ndarray, stepped: np.ndarray | None) -> Output:
        """Step the envs of ``stepped`` (``None``: all) with ``action`` (one row per env)."""
        states, done, trunc = self.step_arrays(action, stepped)
        layout = self.layout
        terminated = np.greater(done, trunc)  # done and not truncated
        if self.move is None:  # the common case, inlined: views of EnvPool's arrays
            shape = self.flag_shape
            if self.unbatched:
                out = {key: from_numpy(states[i])[0] for key, i in self.obs_slots}
            else:
                out = {key: from_numpy(states[i]) for key, i in self.obs_slots}
            out["reward"] = from_numpy(states[layout.reward].reshape(shape))
            out["done"] = from_numpy(done.reshape(shape))
            out["terminated"] = from_numpy(terminated.reshape(shape))
            out["truncated"] = from_numpy(trunc.reshape(shape))
            return out
        flag = self.flag
        out = self.observations(states)
        out["reward"] = flag(states[layout.reward])
        out["done"] = flag(done)
        out["terminated"] = flag(terminated)
        out["truncated"] = flag(trunc)
        return out

    def step_arrays(
        self, action: np.ndarray, stepped: np.ndarray | None
    ) -> tuple[list[Any], np.ndarray, np.ndarray]:
        """:meth:`step` up to EnvPool's arrays: its output list, the done flags and the
        truncated flags (one per env), with the books kept (pending resets, the early reset)."""
        pending = self.pending
        if pending.any:
            pending.check_step(stepped)
        if self.inflight is not None:
            self._settle()
        raw = self.raw
        self.last_action = action
        if stepped is None:
            ids = self.all_ids
            raw.send([ids, ids, action])
            states = raw.recv()
        else:
            ids = np.flatnonzero(stepped).astype(np.int32)
            raw.send([ids, ids, action[ids]])
            states = self.merge(raw.recv(), self.last)
        if self.frame_skip > 1:
            states = self.repeat(states, action, stepped)
        self.last = states
        self.stepped_all = stepped is None
        layout = self.layout
        done = states[layout.done]
        trunc = states[layout.trunc]
        if np.count_nonzero(done):
            pending.mark(done if stepped is None else done & stepped)
            if stepped is None:  # every env stepped, so pending holds just the ended ones
                self.inflight = ids = np.flatnonzero(pending.mask).astype(np.int32)
                # sent now, received by the reset that follows: a step to an ended env is
                # EnvPool's own restart of it (see _restart)
                raw.send([ids, ids, action[ids]])
        return states, done, trunc

    def repeat(
        self, states: list[Any], action: np.ndarray, stepped: np.ndarray | None
    ) -> list[Any]:
        """Step the envs whose episode goes on ``frame_skip - 1`` more times with ``action``,
        summing the rewards; an env whose episode ends stops there."""
        layout = self.layout
        reward = np.array(states[layout.reward], dtype=np.float32, copy=True)
        active = ~states[layout.done]
        if stepped is not None:
            active &= stepped
        for _ in range(self.frame_skip - 1):
            if not active.any():
                break
            ids = np.flatnonzero(active).astype(np.int32)
            self.raw.send([ids, ids, action[ids]])
            states = self.merge(self.raw.recv(), states)
            reward[ids] += states[layout.reward][ids]
            active &= ~states[layout.done]
        states = list(states)
        states[layout.reward] = reward
        return states

    # ------------------------------------------------------------------ async mode
    def reset_async(self) -> Output:
        """Reset every env; return the first ``batch_size`` to come back."""
        self.raw.reset(self.all_ids)
        self.book.reset_all()
        return self._rows(self.raw.recv(), with_reward=False)

    def send(self, action: np.ndarray, env_ids: np.ndarray) -> None:
        """Async mode: send ``action`` (one row per id) to ``env_ids``."""
        self.book.sent(env_ids)
        self.raw.send([env_ids, env_ids, action])

    def fetch(self) -> Output:
        """Async mode: the next ``batch_size`` envs to finish."""
        self.book.check_fetch()
        return self._rows(self.raw.recv(), with_reward=True)

    def _rows(self, states: list[Any], *, with_reward: bool) -> Output:
        layout = self.layout
        env_ids = states[layout.env_id]
        done = states[layout.done]
        trunc = states[layout.trunc]
        flag = self.flag
        out = self.observations(states)
        out["env_id"] = self.tensor(env_ids.astype(np.int64))
        out["is_init"] = flag(self.book.fetched(env_ids, done))
        if with_reward:
            out["reward"] = flag(states[layout.reward])
        out["done"] = flag(done)
        out["terminated"] = flag(np.greater(done, trunc))
        out["truncated"] = flag(trunc)
        return out
