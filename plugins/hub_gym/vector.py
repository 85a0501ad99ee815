"""Vector envs with hub's autoreset semantic, whatever their own autoreset mode.

hub's semantic (DESIGN.md, "Auto-reset semantics"): the step that ends a sub-env's episode
returns that episode's true last observation under ``"next"``; the sub-env starts again only
when hub resets it (``step_and_maybe_reset``, ``rollout``, or ``reset`` with ``"_reset"``); and
no transition is fabricated. :class:`VectorRunner` gets there from each mode:

* ``same_step``: the env has already reset the sub-env; the step's observation at that row is
  the *next* episode's first one. The runner swaps in the true last observation (from ``info``)
  and keeps the first one until hub resets the sub-env, which then costs no call to the env.
* ``next_step``: the step's observation is the true last one, but the env would silently reset
  the sub-env on the next step, dropping its action and returning reward 0. The runner resets
  the sub-env when hub asks (``reset_mask`` on gymnasium >= 1.1, the sub-env itself on a 1.0
  ``SyncVectorEnv``), which cancels that hidden step.
* ``disabled``: nothing happens until hub resets the sub-env with ``reset_mask``.

The runner speaks the array-level hooks of :class:`~hub_gym.GymWrapper`: it takes the actions
as arrays and returns dicts of the vector env's arrays, through the env's public API only.

Example:
    >>> import hub
    >>> env = hub.make_env("gymnasium:CartPole-v1", num_envs=3)
    >>> data = env.rollout(600, break_when_any_done=False)
    >>> bool((data["next", "reward"] == 1).all())  # CartPole pays 1 on every real step
    True
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import torch

import hub
from hub.specs import Composite
from hub_gym.compat.vector import DISABLED, NEXT_STEP, SAME_STEP
from hub_gym.encoding import make_observation_encoder
from hub_gym.row_steps import can_step_rows, step_rows

if TYPE_CHECKING:
    from hub_gym.env import GymWrapper

__all__ = ["VectorRunner"]


def _copy(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else np.array(value, copy=True)


def _set_rows(target: Any, mask: np.ndarray, source: Any) -> None:
    """``target[mask] = source[mask]`` for numpy arrays and tensors alike."""
    if isinstance(target, torch.Tensor):
        index = torch.from_numpy(mask)
        target[index] = torch.as_tensor(source)[index]
    else:
        target[mask] = np.asarray(source)[mask]


class VectorRunner:
    """Resets and steps one gym/gymnasium vector env for a :class:`~hub_gym.GymWrapper`."""

    def __init__(self, wrapper: GymWrapper, env: Any, single_spec: Composite | None) -> None:
        compat = wrapper.compat
        self.env = env
        self.compat = compat
        self.mode = compat.autoreset_mode(env)
        self.partial_ok = bool(compat.supports_partial_reset(env))
        if self.mode in (NEXT_STEP, DISABLED) and not self.partial_ok:
            raise hub.errors.HubError(
                f"{type(env).__name__} ({compat.backend} {compat.version}) resets finished "
                f"sub-envs in {self.mode!r} mode and cannot reset one sub-env alone, so hub "
                "cannot give correct data from it (the step after an episode's end would drop "
                "that sub-env's action). Wrap a SyncVectorEnv (or, on gymnasium >= 1.1, a "
                "SyncVectorEnv/AsyncVectorEnv, any autoreset mode), or let hub build the env: "
                "hub.make_env('gymnasium:<id>', num_envs=N)."
            )
        self.wrapper = wrapper
        self.n = int(env.num_envs)
        self.encode = wrapper.observation_encoder
        self.encode_row = make_observation_encoder(env.single_observation_space, single_spec)
        self.step_output = compat.vector_step_output
        self.pending = np.zeros(self.n, dtype=bool)
        self.any_pending = False
        self.cache: dict[str, Any] | None = None  # same_step: first observations of new episodes
        self.cache_valid = np.zeros(self.n, dtype=bool)
        self.last: dict[str, Any] | None = None
        self.seed_kwargs: dict[str, Any] = {}  # the next reset's seed (see seed())
        # partial steps step only the marked sub-envs where the env allows (hub_gym.row_steps)
        self.row_steps = can_step_rows(env, self.mode)

    # ------------------------------------------------------------------ seeding and resets
    def seed(self, seed: int | None) -> None:
        """Seed every sub-env (``seed``, ``seed + 1``, ...) from the next reset on, which then
        gives the raw vector env's ``reset(seed=seed)`` observations."""
        self.seed_kwargs = self.compat.seed_reset_kwargs(self.env, seed)

    def _clear(self, mask: np.ndarray) -> None:
        self.pending[mask] = False
        self.cache_valid[mask] = False
        self.any_pending = bool(self.pending.any())

    def reset(self, rows: np.ndarray | None, kwargs: dict[str, Any]) -> tuple[dict[str, Any], Any]:
        """Reset the sub-envs of ``rows`` (all when ``None``); ``(observations, info)``."""
        info: Any = {}
        if self.seed_kwargs or kwargs.get("seed") is not None:
            kwargs = {**self.seed_kwargs, **kwargs}  # a seed applies to every sub-env
            self.seed_kwargs = {}
            rows = None
        if rows is None and not kwargs and self.last is not None and self.any_pending:
            every = np.ones(self.n, dtype=bool)
            if self._all_cached(every):
                rows = every  # every sub-env ended and already started its next episode itself
        if rows is None or self.last is None or (rows.all() and not self._all_cached(rows)):
            obs, info = self.compat.reset_output(self.compat.reset_env(self.env, kwargs))
            out = self.encode(obs)
            self._clear(np.ones(self.n, dtype=bool))
        else:
            out = self._partial_reset(rows)
        self.last = dict(out)
        return out, info

    def _all_cached(self, mask: np.ndarray) -> bool:
        """Whether every sub-env of ``mask`` ended its episode and already started the next
        one itself (same-step mode): its reset is that first observation, not a new draw."""
        return bool((self.pending & self.cache_valid)[mask].all())

    def _partial_reset(self, mask: np.ndarray) -> dict[str, Any]:
        held = self.pending & self.cache_valid  # same-step mode: first observations kept
        if self.partial_ok and not held.any():
            # no first observation is held back (always so outside same-step mode): the env's
            # observations of the rows not reset are the last ones hub returned, so a reset
            # that gives every row (gymnasium >= 1.1) is the output as it is
            result = self.compat.partial_reset(self.env, mask)
            if result.batch is not None:
                out = self.encode(result.batch)
            else:
                out = {key: _copy(value) for key, value in self.last.items()}
                self._write_rows(result, mask, out)
            self._clear(mask)
            return out
        out = {key: _copy(value) for key, value in self.last.items()}
        cached = mask & held
        if cached.any():
            for key, value in out.items():
                _set_rows(value, cached, self.cache[key])
        fresh = mask & ~cached
        if fresh.any():
            self._reset_rows(fresh, out)
        self._clear(mask)
        return out

    def _reset_rows(self, mask: np.ndarray, out: dict[str, Any]) -> None:
        """Reset the sub-envs of ``mask`` through the env and write their observations."""
        if not self.partial_ok:
            raise hub.errors.HubError(
                f"cannot reset sub-envs {np.flatnonzero(mask).tolist()} of "
                f"{type(self.env).__name__} alone: this vector env can only reset all its "
                "sub-envs at once (it restarts finished ones by itself, which hub handles). "
                "Reset them all (env.reset() without '_reset'), or wrap a SyncVectorEnv."
            )
        self._write_rows(self.compat.partial_reset(self.env, mask), mask, out)

    def _write_rows(self, result: Any, mask: np.ndarray, out: dict[str, Any]) -> None:
        """Write the observations of a partial reset's ``result`` into ``out``'s rows of
        ``mask``."""
        if result.batch is not None:
            fresh = self.encode(result.batch)
            for key, value in out.items():
                _set_rows(value, mask, fresh[key])
            return
        for index, obs in result.rows.items():
            row = self.encode_row(obs)
            for key, value in out.items():
                value[index] = (
                    row[key] if not isinstance(value, torch.Tensor) else torch.as_tensor(row[key])
                )

    # ------------------------------------------------------------------ steps
    def _skip_pending(self, rows: np.ndarray | None, hidden: bool = True) -> None:
        """Finished sub-envs that are not stepped (``rows`` is ``False`` there): restart them,
        hidden, so that the vector env can step (unless only ``rows`` are stepped:
        ``hidden=False``); they stay pending and are reset again when hub asks."""
        skipped = self.pending if rows is None else self.pending & ~rows
        if skipped.any() and self.mode == DISABLED and hidden:
            self.compat.partial_reset(self.env, skipped.copy())
        self.cache_valid[skipped] = False

    def step(self, action: Any, rows: np.ndarray | None) -> tuple[dict[str, Any], Any]:
        """Step every sub-env; the data of finished episodes ends with their true last step.
        Returns ``(output arrays, info)``."""
        only = rows if self.row_steps and rows is not None and not rows.all() else None
        if self.any_pending:
            self._skip_pending(rows, hidden=only is None)
        env_step = self.env.step
        if only is not None:  # only the marked sub-envs: the others are not touched

            def env_step(action: Any) -> Any:
                return step_rows(self.env, action, only)

        obs, reward, terminated, truncated, info = self.step_output(env_step(action))
        done = np.logical_or(terminated, truncated)
        any_done = bool(done.any())
        skip = self.wrapper.frame_skip
        if skip > 1:
            reward = np.array(reward, dtype=np.float64)
            for _ in range(skip - 1):
                if any_done:
                    break
                obs, more, terminated, truncated, info = self.step_output(env_step(action))
                reward = reward + more
                done = np.logical_or(terminated, truncated)
                any_done = bool(done.any())
        out = self.encode(obs)
        if any_done:
            self._episode_ends(done, out, info)
        self.last = dict(out)
        out["reward"] = np.asarray(reward)
        out["terminated"] = np.asarray(terminated, dtype=bool)
        out["truncated"] = np.asarray(truncated, dtype=bool)
        return out, info

    def _episode_ends(self, done: np.ndarray, out: dict[str, Any], info: Any) -> None:
        """Record finished sub-envs; in same-step mode, swap in their true last observations."""
        if self.mode == SAME_STEP:
            self.cache = {key: _copy(value) for key, value in out.items()}
            finals = self.compat.final_observations(info)
            for index in np.flatnonzero(done):
                if int(index) not in finals:
                    raise hub.errors.HubError(
                        f"{type(self.env).__name__} ended the episode of sub-env {int(index)} "
                        "without giving its last observation in info (expected in same-step "
                        f"autoreset mode, {self.compat.backend} {self.compat.version}); hub "
                        "cannot return a correct last step. Was the env wrapped in a way that "
                        "drops info entries? Vector envs that hub builds itself "
                        "(hub.make_env('gym:ID', num_envs=N)) always keep it."
                    )
                row = self.encode_row(finals[int(index)])
                for key, value in out.items():
                    value[int(index)] = (
                        torch.as_tensor(row[key]) if isinstance(value, torch.Tensor) else row[key]
                    )
            self.cache_valid |= done
        self.pending |= done
        self.any_pending = True
