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

A ``SyncVectorEnv`` that hub built (gymnasium >= 1.1, ``disabled`` mode) has its finished
sub-envs reset one by one through ``env.envs[i].reset()``, with the arguments and the vector
env's bookkeeping of ``reset(options={"reset_mask": m})`` but without its copy of every
observation; :meth:`VectorRunner.step_and_reset` is the step of ``step_and_maybe_reset`` in one
call for it (flat ``Box`` observations, no ``frame_skip``, CPU).

Stepping a sub-env whose episode ended without resetting it raises a clear error instead of
producing a transition across two episodes.

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
from tensordict import TensorDict, TensorDictBase

import hub
from hub.specs import Composite
from hub_gym.compat.vector import DISABLED, NEXT_STEP, SAME_STEP
from hub_gym.encoding import make_observation_encoder
from hub_gym.row_steps import can_step_rows, step_rows

if TYPE_CHECKING:
    from hub_gym.env import GymWrapper

__all__ = ["VectorRunner"]

_SYNC_STATE = ("envs", "_env_obs", "_terminations", "_truncations", "_autoreset_envs")
"""What a gymnasium ``SyncVectorEnv`` keeps per sub-env and its masked reset updates."""


class VectorRunner:
    """Resets and steps one gym/gymnasium vector env for a :class:`~hub_gym.GymWrapper`."""

    def __init__(self, wrapper: GymWrapper, single_spec: Composite | None) -> None:
        env = wrapper._env
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
        self.batch_size = wrapper.batch_size
        self.device = wrapper.device
        self.encode = wrapper._encode_obs_fn
        self.encode_row = make_observation_encoder(env.single_observation_space, single_spec)
        self.read_action = wrapper._action_reader
        self.step_output = compat.vector_step_output
        self.pending = np.zeros(self.n, dtype=bool)
        self.any_pending = False
        self.cache: dict[str, Any] | None = None  # same_step: first observations of new episodes
        self.cache_valid = np.zeros(self.n, dtype=bool)
        self.last: dict[str, Any] | None = None
        # a hub-built gymnasium SyncVectorEnv: reset rows through the sub-envs themselves
        self.direct = (
            compat.backend == "gymnasium"
            and self.mode == DISABLED
            and type(env).__name__ == "SyncVectorEnv"
            and type(env).__module__.startswith("gymnasium.vector")
            and all(hasattr(env, name) for name in _SYNC_STATE)
        )
        self.lean = (
            self.direct
            and type(env.single_observation_space).__name__ == "Box"
            and getattr(env, "copy", False) is True
            and wrapper.frame_skip == 1
            and self.device is None
            and single_spec is not None
            and list(single_spec.keys()) == ["observation"]
        )
        if self.lean:
            dtype = single_spec["observation"].dtype
            self.obs_dtype = torch.empty(0, dtype=dtype).numpy().dtype
            self.obs_shape = (self.n, *single_spec["observation"].shape)
        self.seed_kwargs: dict[str, Any] = {}  # the next reset's seed (see seed())
        # partial steps ("_step") step only the marked sub-envs (hub_gym.row_steps)
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

    def reset(self, tensordict: TensorDictBase | None, kwargs: dict[str, Any]) -> TensorDictBase:
        """Reset the sub-envs marked by ``tensordict["_reset"]`` (all without it)."""
        mask = None
        if tensordict is not None:
            flags = tensordict.get("_reset", None)
            if flags is not None:
                mask = flags.reshape(self.n).cpu().numpy()
        info: Any = {}
        if self.seed_kwargs:  # a seed applies to a reset of every sub-env
            kwargs = {**self.seed_kwargs, **kwargs}
            self.seed_kwargs = {}
            mask = None
        if mask is None or self.last is None or (mask.all() and not self._all_cached(mask)):
            obs, info = self.compat.reset_output(self.compat.reset_env(self.env, kwargs))
            out = self.encode(obs)
            self._clear(np.ones(self.n, dtype=bool))
        else:
            out = self._partial_reset(mask)
        self.last = dict(out)
        not_done = torch.zeros((self.n, 1), dtype=torch.bool)
        out["terminated"], out["truncated"], out["done"] = (
            not_done,
            not_done.clone(),
            not_done.clone(),
        )
        return self._output(out, info)

    def _all_cached(self, mask: np.ndarray) -> bool:
        """Whether every sub-env of ``mask`` ended its episode and already started the next
        one itself (same-step mode): its reset is that first observation, not a new draw."""
        return bool((self.pending & self.cache_valid)[mask].all())

    def _output(self, out: dict[str, Any], info: Any) -> TensorDictBase:
        """The tensordict of a reset or step output, on the env's device, with the info
        readers' entries."""
        if self.device is not None:
            out = {key: value.to(self.device) for key, value in out.items()}
        td = TensorDict(out, batch_size=self.batch_size, device=self.device)
        for reader in self.wrapper.info_dict_reader:
            reader(info, td)
        return td

    def _partial_reset(self, mask: np.ndarray) -> dict[str, Any]:
        out = {key: value.clone() for key, value in self.last.items()}
        cached = mask & self.pending & self.cache_valid
        if cached.any():
            rows = torch.from_numpy(cached)
            for key, value in out.items():
                value[rows] = self.cache[key][rows]
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
        if self.direct:
            for index, obs in self._reset_direct(mask):
                row = self.encode_row(obs)
                for key, value in out.items():
                    value[index] = row[key]
            return
        result = self.compat.partial_reset(self.env, mask)
        if result.batch is not None:
            fresh = self.encode(result.batch)
            rows = torch.from_numpy(mask)
            for key, value in out.items():
                value[rows] = fresh[key][rows]
            return
        for index, obs in result.rows.items():
            row = self.encode_row(obs)
            for key, value in out.items():
                value[index] = row[key]

    def _reset_direct(self, mask: np.ndarray) -> list[tuple[int, Any]]:
        """``env.reset(options={"reset_mask": mask})`` of a gymnasium ``SyncVectorEnv``
        without its concatenated copy of every observation: the same sub-env calls
        (``reset(seed=None, options={})``) and the same bookkeeping. Returns ``[(row, obs)]``."""
        env = self.env
        env._terminations[mask] = False
        env._truncations[mask] = False
        env._autoreset_envs[mask] = False
        envs, env_obs = env.envs, env._env_obs
        rows = []
        for index in np.flatnonzero(mask).tolist():
            obs, _ = envs[index].reset(seed=None, options={})
            env_obs[index] = obs
            rows.append((index, obs))
        return rows

    # ------------------------------------------------------------------ steps
    def step_and_reset(
        self, action: Any
    ) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None]:
        """For ``lean`` runners with no pending sub-env: step every sub-env with the hub
        ``action``, then reset those whose episode ended. Returns ``(next, first)``: the step's
        entries (true last observations where an episode ended) and, when some sub-env was
        reset, the next input's observation and done flags (``None`` otherwise): the data of
        :meth:`step` then :meth:`reset` with ``"_reset"`` set to the done flags."""
        obs, reward, terminated, truncated, _ = self.step_output(
            self.env.step(self.read_action(action))
        )
        n = self.n
        # the env returns new arrays each step (copy=True): no copy needed to own them
        observation = np.asarray(obs, dtype=self.obs_dtype)
        if observation.shape != self.obs_shape:
            observation = observation.reshape(self.obs_shape)
        terminated = np.asarray(terminated, dtype=bool).reshape(n, 1)
        truncated = np.asarray(truncated, dtype=bool).reshape(n, 1)
        done = terminated | truncated
        obs_t = torch.from_numpy(observation)
        out = {
            "observation": obs_t,
            "reward": torch.from_numpy(np.array(reward, dtype=np.float32).reshape(n, 1)),
            "terminated": torch.from_numpy(terminated),
            "truncated": torch.from_numpy(truncated),
            "done": torch.from_numpy(done),
        }
        mask = done.reshape(n)
        if not mask.any():
            self.last = {"observation": obs_t}
            return out, None
        first = observation.copy()
        for index, row in self._reset_direct(mask):
            first[index] = row
        first_t = torch.from_numpy(first)
        self.last = {"observation": first_t}
        zeros = np.zeros((n, 1), dtype=bool)
        return out, {
            "observation": first_t,
            "terminated": torch.from_numpy(zeros),
            "truncated": torch.from_numpy(zeros.copy()),
            "done": torch.from_numpy(zeros.copy()),
        }

    def _check_pending(self, tensordict: TensorDictBase, hidden_reset: bool = True) -> None:
        step_mask = tensordict.get("_step", None)
        stepped = self.pending.copy()
        if step_mask is not None:
            stepped &= step_mask.reshape(self.n).cpu().numpy()
        if stepped.any():
            raise hub.errors.HubError(
                f"sub-envs {np.flatnonzero(stepped).tolist()} ended their episode and were not "
                "reset: stepping them would make a transition across two episodes. Reset them "
                "first: use env.step_and_maybe_reset(td) or env.rollout(...), or call "
                "env.reset(td) with td['_reset'] set to the 'done' flags."
            )
        # the finished sub-envs are skipped ("_step" is False): restart them, hidden, so that
        # the vector env can step; they stay pending and are reset again when hub asks
        skipped = self.pending
        if self.mode == DISABLED and hidden_reset:
            self.compat.partial_reset(self.env, skipped.copy())
        self.cache_valid[skipped] = False

    def step(self, tensordict: TensorDictBase) -> TensorDictBase:
        """Step every sub-env; the data of finished episodes ends with their true last step."""
        rows = self._step_rows(tensordict)
        if self.any_pending:
            self._check_pending(tensordict, hidden_reset=rows is None)
        action = self.read_action(tensordict.get("action"))
        env_step = self.env.step
        if rows is not None:  # only the marked sub-envs: the others are not touched

            def env_step(action: Any) -> Any:
                return step_rows(self.env, action, rows)

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
        n = self.n
        out["reward"] = torch.from_numpy(np.array(reward, dtype=np.float32).reshape(n, 1))
        out["terminated"] = torch.from_numpy(np.array(terminated, dtype=bool).reshape(n, 1))
        out["truncated"] = torch.from_numpy(np.array(truncated, dtype=bool).reshape(n, 1))
        out["done"] = torch.from_numpy(done.reshape(n, 1).copy())
        return self._output(out, info)

    def _step_rows(self, tensordict: TensorDictBase) -> np.ndarray | None:
        """The ``"_step"`` mask when it leaves sub-envs out and they can be left out."""
        mask = tensordict.get("_step", None) if self.row_steps else None
        if mask is None:
            return None
        rows = mask.reshape(self.n).cpu().numpy()
        return None if rows.all() else rows

    def _episode_ends(self, done: np.ndarray, out: dict[str, Any], info: Any) -> None:
        """Record finished sub-envs; in same-step mode, swap in their true last observations."""
        if self.mode == SAME_STEP:
            self.cache = {key: value.clone() for key, value in out.items()}
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
                    value[int(index)] = row[key]
            self.cache_valid |= done
        self.pending |= done
        self.any_pending = True
