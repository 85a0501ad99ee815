"""The least a process vectorizer does: the limit row of ``bench_scale.py`` (not part of hub).

``num_workers`` processes (``fork``) hold ``num_envs / num_workers`` gymnasium envs each. Every
field (observation, reward, terminated, truncated, action) is one shared-memory array for the
whole batch; a worker reads its slice of the actions, steps its envs in a Python loop, resets an
env whose episode ended (autoreset in the worker: the reset's observation replaces the last one)
and writes its slice of the outputs in place. No TensorDict, no spec, no check, no copy of the
outputs: ``step`` returns views of the shared arrays, valid until the next call.

The parent and the workers wait for each other either on semaphores (``spin=False``: one
semaphore per worker to start it, one shared to hear back; a waiting process sleeps) or by
busy-waiting on a shared flag per worker (``spin=True``: all processes spin, which on a machine
with fewer cores than processes costs the workers the cores they need).

Example:
    >>> import gymnasium
    >>> from functools import partial
    >>> vec = MinimalVec(partial(gymnasium.make, "CartPole-v1"), num_envs=4, num_workers=2)
    >>> obs = vec.reset(seed=0)
    >>> obs.shape, vec.step([0, 1, 0, 1])[1].tolist()
    ((4, 4), [1.0, 1.0, 1.0, 1.0])
    >>> vec.close()
"""

from __future__ import annotations

import ctypes
import multiprocessing as mp
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

__all__ = ["MinimalVec"]

_STEP, _RESET, _CLOSE = 0, 1, 2
_IDLE, _GO = 0, 1


def _shared(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zeroed numpy array in shared memory that ``fork``-ed children see."""
    dtype = np.dtype(dtype)
    raw = mp.RawArray(ctypes.c_byte, max(1, int(np.prod(shape)) * dtype.itemsize))
    return np.frombuffer(raw, dtype=dtype, count=int(np.prod(shape))).reshape(shape)


class MinimalVec:
    """``num_envs`` copies of ``make_env()`` in ``num_workers`` processes (see the module)."""

    def __init__(
        self,
        make_env: Callable[[], Any],
        num_envs: int,
        num_workers: int = 2,
        spin: bool = False,
    ) -> None:
        num_workers = max(1, min(num_workers, num_envs))
        probe = make_env()
        obs_space, act_space = probe.observation_space, probe.action_space
        probe.close()
        n = num_envs
        self.num_envs, self.num_workers, self.spin = n, num_workers, spin
        self.obs = _shared((n, *obs_space.shape), obs_space.dtype)
        self.reward = _shared((n,), np.float64)
        self.terminated = _shared((n,), np.bool_)
        self.truncated = _shared((n,), np.bool_)
        self.action = _shared((n, *act_space.shape), act_space.dtype)
        self._command = _shared((1,), np.int64)
        self._seed = _shared((1,), np.int64)
        self._flags = _shared((num_workers,), np.int32)  # spin: _GO while a worker works
        per = -(-n // num_workers)
        self._slices = [slice(w * per, min(n, (w + 1) * per)) for w in range(num_workers)]
        ctx = mp.get_context("fork")
        self._go = [ctx.Semaphore(0) for _ in range(num_workers)]
        self._done = ctx.Semaphore(0)
        self._procs = []
        for w, rows in enumerate(self._slices):
            proc = ctx.Process(target=self._work, args=(w, rows, make_env), daemon=True)
            proc.start()
            self._procs.append(proc)

    # ---------------------------------------------------------------- the worker
    def _work(self, w: int, rows: slice, make_env: Callable[[], Any]) -> None:
        envs = [make_env() for _ in range(rows.start, rows.stop)]
        obs, reward = self.obs[rows], self.reward[rows]
        term, trunc, action = self.terminated[rows], self.truncated[rows], self.action[rows]
        flags, go = self._flags, self._go[w]
        while True:
            if self.spin:
                while flags[w] != _GO:
                    pass
            else:
                go.acquire()
            command = int(self._command[0])
            if command == _CLOSE:
                for env in envs:
                    env.close()
                self._answer(w)
                return
            if command == _RESET:
                seed = int(self._seed[0])
                for i, env in enumerate(envs):
                    obs[i] = env.reset(seed=None if seed < 0 else seed + rows.start + i)[0]
            else:
                for i, env in enumerate(envs):
                    o, r, te, tr, _ = env.step(action[i])
                    if te or tr:
                        o = env.reset()[0]
                    obs[i], reward[i], term[i], trunc[i] = o, r, te, tr
            self._answer(w)

    def _answer(self, w: int) -> None:
        if self.spin:
            self._flags[w] = _IDLE
        else:
            self._done.release()

    # ---------------------------------------------------------------- the parent
    def _run(self, command: int) -> None:
        self._command[0] = command
        if self.spin:
            self._flags[:] = _GO
            while self._flags.any():
                pass
        else:
            for go in self._go:
                go.release()
            for _ in self._go:
                self._done.acquire()

    def reset(self, seed: int | None = None) -> np.ndarray:
        """Reset every env (env ``i`` seeded ``seed + i``); returns the observations."""
        self._seed[0] = -1 if seed is None else seed
        self._run(_RESET)
        return self.obs

    def step(self, actions: Sequence[Any] | np.ndarray) -> tuple[np.ndarray, ...]:
        """Step every env; ``(obs, reward, terminated, truncated)`` as shared views."""
        self.action[:] = actions
        self._run(_STEP)
        return self.obs, self.reward, self.terminated, self.truncated

    def close(self) -> None:
        """Close the envs and join the workers."""
        self._run(_CLOSE)
        for proc in self._procs:
            proc.join(5)
            if proc.is_alive():
                proc.kill()
