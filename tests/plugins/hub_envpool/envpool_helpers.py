"""Shared helpers of the hub_envpool tests: gym backends, and a reference run that resets by hand."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

from hub.dispatch import is_installed

BACKENDS = [b for b in ("gymnasium", "gym") if is_installed(b)]


def backend_params() -> list:
    """One param per installed gym backend; gym is skipped, with the reason, where it is missing."""
    return [
        b
        if b in BACKENDS
        else pytest.param(b, marks=pytest.mark.skip(reason=f"{b} is not installed"))
        for b in ("gymnasium", "gym")
    ]


def predrawn_policy(actions: torch.Tensor):
    """A policy that writes ``actions[t]`` at its t-th call."""
    state = {"t": 0}

    def policy(td: Any) -> Any:
        td.set("action", actions[state["t"]])
        state["t"] += 1
        return td

    return policy


def reference_run(
    task: str, num_envs: int, seed: int, actions: np.ndarray
) -> dict[str, np.ndarray]:
    """Raw EnvPool, stepped with ``actions``; an env whose episode ends is reset by hand at once.

    Returns per-step arrays (time first): ``observation`` (the input of the step),
    ``next_observation``, ``reward``, ``terminated``, ``truncated``.
    """
    with warnings.catch_warnings():  # gymnasium warns about EnvPool's float64 bounds
        warnings.simplefilter("ignore", UserWarning)
        return _reference_run(task, num_envs, seed, actions)


def _reference_run(
    task: str, num_envs: int, seed: int, actions: np.ndarray
) -> dict[str, np.ndarray]:
    import envpool

    pool = envpool.make(task, env_type="gymnasium", num_envs=num_envs, seed=seed)
    obs, _ = pool.reset()
    names = ("observation", "next_observation", "reward", "terminated", "truncated")
    out: dict[str, list] = {k: [] for k in names}
    for action in actions:
        nxt, reward, terminated, truncated, _ = pool.step(action)
        for key, value in zip(names, (obs, nxt, reward, terminated, truncated)):
            out[key].append(np.array(value, copy=True))
        obs = np.array(nxt, copy=True)
        done = np.logical_or(terminated, truncated)
        if done.any():
            ids = np.flatnonzero(done).astype(np.int32)
            first, _ = pool.reset(ids)
            obs[ids] = first
    pool.close()
    return {k: np.stack(v) for k, v in out.items()}
