"""``HubVectorEnv``: a hub env with batch size ``[N]`` as a ``gymnasium.vector.VectorEnv``.

The exported env follows gymnasium 1.x's vector API: its three autoreset modes, chosen with
``to_gymnasium(env, autoreset_mode=...)`` (gymnasium's ``AutoresetMode``; ``NEXT_STEP`` by
default, as gymnasium's own vector envs):

* ``NEXT_STEP``: the step that ends an episode returns its true last observation; the next
  step ignores that sub-env's action, resets it, and returns its first observation with reward
  0 and neither flag set;
* ``SAME_STEP``: the step that ends an episode returns the next episode's first observation;
  the true last one is in ``info["final_obs"]`` (``info["_final_obs"]`` marks the rows), and
  ``info["final_info"]``/``info["_final_info"]`` are there too;
* ``DISABLED``: nothing is reset until ``reset(options={"reset_mask": mask})``.

``reset(seed=s)`` seeds the hub env with ``s``; ``reset(seed=[s0, s1, ...])`` gives one seed
per sub-env where the hub env can take them (gym/gymnasium vector envs); ``reset(options=
{"reset_mask": mask})`` resets the marked sub-envs only. gymnasium 1.0 knows only next-step
autoreset; before 1.0 the exported env resets in the same step and reports the last
observation in ``info["final_observation"]`` (the format of those versions).

Example:
    >>> import hub, numpy as np
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Counting", num_envs=2, max_steps=2))
    >>> obs, _ = genv.reset(seed=0)
    >>> for _ in range(2):
    ...     obs, reward, terminated, truncated, info = genv.step(np.ones(2, dtype=np.int64))
    >>> terminated.tolist()
    [True, True]
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from typing import Any

import numpy as np
from packaging.version import Version

from hub.errors import HubError
from hub.export import render as _render
from hub.export.codec import (
    make_action_writer,
    make_buffer_writer,
    make_obs_reader,
    observation_space,
)
from hub.export.infos import InfoReader, info_keys
from hub.export.spaces import spec_to_space
from hub.export.stepper import Stepper
from hub.export.subenvs import SubEnvs, backend_env, backend_observation_space

# loaded on demand: only to_gymnasium imports this module
gymnasium = importlib.import_module("gymnasium")

__all__ = ["HubVectorEnv", "export_autoreset_mode", "resolve_autoreset_mode"]

SAME_STEP, NEXT_STEP, DISABLED = "same_step", "next_step", "disabled"
_ENUM_NAMES = {NEXT_STEP: "NEXT_STEP", SAME_STEP: "SAME_STEP", DISABLED: "DISABLED"}
_ALIASES = {
    "next_step": NEXT_STEP,
    "nextstep": NEXT_STEP,
    "same_step": SAME_STEP,
    "samestep": SAME_STEP,
    "disabled": DISABLED,
}
_VERSION = Version(gymnasium.__version__)
_HAS_MODES = hasattr(gymnasium.vector, "AutoresetMode")  # gymnasium >= 1.1


def export_autoreset_mode() -> str:
    """The default autoreset mode of exported vector envs with the installed gymnasium:
    ``"next_step"`` (gymnasium >= 1.0, as its own vector envs), ``"same_step"`` before 1.0.

    Example:
        >>> export_autoreset_mode() in ("same_step", "next_step")
        True
    """
    return SAME_STEP if _VERSION < Version("1.0") else NEXT_STEP


def resolve_autoreset_mode(mode: Any) -> str:
    """``"next_step"``, ``"same_step"`` or ``"disabled"`` for gymnasium's ``AutoresetMode``
    member (or its name or value: ``"NextStep"``, ``"next_step"``...); ``None`` gives the
    default. Modes the installed gymnasium does not have raise a :class:`~hub.errors.HubError`.

    Example:
        >>> resolve_autoreset_mode(None) == export_autoreset_mode()
        True
    """
    if mode is None:
        return export_autoreset_mode()
    raw = getattr(mode, "value", mode)
    name = str(raw).lower().replace("-", "_")
    resolved = _ALIASES.get(name)
    if resolved is None and str(getattr(mode, "name", "")).lower() in _ALIASES:
        resolved = _ALIASES[str(mode.name).lower()]
    if resolved is None:
        raise HubError(
            f"autoreset_mode={mode!r} is not an autoreset mode; use gymnasium.vector."
            "AutoresetMode.NEXT_STEP, SAME_STEP or DISABLED."
        )
    if not _HAS_MODES and resolved != export_autoreset_mode():
        raise HubError(
            f"gymnasium {gymnasium.__version__} has one autoreset mode "
            f"({export_autoreset_mode()!r}); autoreset_mode={mode!r} needs gymnasium >= 1.1."
        )
    return resolved


class HubVectorEnv(gymnasium.vector.VectorEnv):
    """A ``gymnasium.vector.VectorEnv`` that runs a batched hub env (see the module docs)."""

    def __init__(
        self,
        env: Any,
        keys: Sequence[Any],
        render_mode: str | None = None,
        autoreset_mode: Any = None,
    ) -> None:
        self.hub_env = env
        self.num_envs = n = int(env.batch_size[0])
        mode = getattr(env, "render_mode", None)
        render_mode = render_mode or (mode if isinstance(mode, str) else None)
        _render.enable_rendering(env, render_mode)
        self.render_mode = render_mode
        self.closed = False
        self.is_vector_env = True
        self._mode = resolve_autoreset_mode(autoreset_mode)
        spec = env.full_observation_spec
        single = spec[0]
        keys = list(keys)
        self.single_observation_space = observation_space(
            single, keys, source=backend_observation_space(env)
        )
        self._stepper = stepper = Stepper(env)
        action_spec = env.full_action_spec[stepper.action_key]
        self.single_action_space = spec_to_space(action_spec[0])
        batch = gymnasium.vector.utils.batch_space
        self.observation_space = batch(self.single_observation_space, n)
        self.action_space = batch(self.single_action_space, n)
        self._subenvs = SubEnvs(env)
        self._info = InfoReader(info_keys(env))
        self.spec = self._sub_env_spec()
        self.metadata = {
            "render_modes": list(_render.RENDER_MODES),
            **self._sub_env_metadata(),
        }
        if _HAS_MODES:
            self.metadata["autoreset_mode"] = self.autoreset_mode
        self._read_td = make_obs_reader(spec, keys, batched=True, as_tuple=True)
        if stepper.fast:
            self._write_action = make_buffer_writer(action_spec, stepper.td.get(stepper.action_key))
        else:
            encode = make_action_writer(action_spec)

            def write(action: Any) -> None:
                stepper.td.set(stepper.action_key, encode(action))

            self._write_action = write
        self._autoreset = np.zeros(n, dtype=bool)
        self._started = False

    # ------------------------------------------------------------------ attributes
    def _sub_env_spec(self) -> Any:
        """The gymnasium ``EnvSpec`` of the sub-envs when they are gymnasium envs (``None``
        otherwise, as a ``SyncVectorEnv`` built by hand has)."""
        try:
            spec = self._subenvs.get_attr("spec", [0])[0]
        except Exception:  # noqa: BLE001 - sub-envs without a gymnasium spec
            return None
        return spec if type(spec).__name__ == "EnvSpec" else None

    def _sub_env_metadata(self) -> dict[str, Any]:
        """The first sub-env's metadata (``render_fps``...) when it is a gymnasium env's."""
        try:
            metadata = self._subenvs.get_attr("metadata", [0])[0]
        except Exception:  # noqa: BLE001 - hub envs have no gymnasium metadata
            return {}
        if not isinstance(metadata, dict):
            return {}
        return {k: v for k, v in metadata.items() if k not in ("render_modes", "autoreset_mode")}

    def _sub_env_generators(self, name: str) -> tuple[Any, ...] | None:
        """``name`` (``np_random`` or ``np_random_seed``) of each sub-env when they are
        gymnasium envs in this process (as a ``SyncVectorEnv`` gives them), else ``None``."""
        if _VERSION < Version("1.0"):
            return None
        objects = self._subenvs.objects()
        if objects is None or not all(
            backend_env(o) is not None or hasattr(o, "unwrapped") for o in objects
        ):
            return None
        try:
            return tuple(self._subenvs.get_attr(name))
        except (AttributeError, HubError):
            return None

    @property
    def np_random(self) -> Any:
        """The sub-envs' generators (a tuple, as ``SyncVectorEnv``'s) when they are gymnasium
        envs of this process; else this env's own generator (``VectorEnv``'s)."""
        generators = self._sub_env_generators("np_random")
        if generators is not None:
            return generators
        if getattr(self, "_np_random", None) is None:
            self._seed_np_random(None)
        return self._np_random

    @np_random.setter
    def np_random(self, value: Any) -> None:
        self._np_random = value

    @property
    def np_random_seed(self) -> Any:
        """The sub-envs' seeds (a tuple, as ``SyncVectorEnv``'s) when they are gymnasium envs of
        this process; else the seed given to ``reset``."""
        seeds = self._sub_env_generators("np_random_seed")
        if seeds is not None:
            return seeds
        return getattr(self, "_np_random_seed", None)

    def get_attr(self, name: str) -> tuple[Any, ...]:
        """The attribute ``name`` of each sub-env (gymnasium's ``VectorEnv.get_attr``)."""
        return tuple(self._subenvs.get_attr(name))

    def set_attr(self, name: str, values: Any) -> None:
        """Set the attribute ``name`` of each sub-env: one value each (a list or tuple of
        ``num_envs`` values) or one for all, as gymnasium's ``VectorEnv.set_attr``."""
        if not isinstance(values, (list, tuple)):
            values = [values] * self.num_envs
        if len(values) != self.num_envs:
            raise ValueError(
                "Values must be a list or tuple with length equal to the number of "
                f"environments. Got `{len(values)}` values for {self.num_envs} environments."
            )
        self._subenvs.set_each(name, list(values))

    def call(self, name: str, *args: Any, **kwargs: Any) -> tuple[Any, ...]:
        """Call the method ``name`` of each sub-env (an attribute gives its value), as
        gymnasium's ``VectorEnv.call``."""
        return tuple(self._subenvs.call(name, args, kwargs))

    @property
    def autoreset_mode(self) -> Any:
        """gymnasium's ``AutoresetMode`` member of this env (gymnasium >= 1.1; before, the
        mode's name: ``"next_step"`` or ``"same_step"``)."""
        if _HAS_MODES:
            return getattr(gymnasium.vector.AutoresetMode, _ENUM_NAMES[self._mode])
        return self._mode

    # ------------------------------------------------------------------ reset
    def reset(
        self,
        *,
        seed: int | Sequence[int | None] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[Any, dict[str, Any]]:
        """Reset every sub-env, or those of ``options["reset_mask"]``; ``seed`` is an int or
        one seed per sub-env."""
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if mask is not None:
            mask = self._check_mask(mask)
        if isinstance(seed, (int, np.integer)):
            self._seed_np_random(int(seed))
        kwargs: dict[str, Any] = {"options": options} if options else {}
        seeds = self._seed_kwargs(seed, mask)
        kwargs.update(seeds)
        if mask is None or not self._started:
            self._stepper.reset(**kwargs)
            self._autoreset[:] = False
            mask = None
        else:
            self._stepper.reset(mask=mask, **kwargs)
            self._autoreset[mask] = False
        self._started = True
        return self._read_td(self._stepper.td), self._info.vector(self._stepper.td, mask)

    def _seed_np_random(self, seed: int | None) -> None:
        self._np_random, self._np_random_seed = gymnasium.utils.seeding.np_random(seed)

    def _check_mask(self, mask: Any) -> np.ndarray:
        n = self.num_envs
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (n,):
            raise ValueError(f"`options['reset_mask']` must have shape `({n},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not mask.any():
            raise ValueError(
                "`options['reset_mask']` must contain a boolean array with at least one True "
                f"value, got reset_mask={mask}"
            )
        return mask

    def _seed_kwargs(self, seed: Any, mask: np.ndarray | None) -> dict[str, Any]:
        """Seed the hub env; returns the ``reset`` arguments that carry per-sub-env seeds."""
        if seed is None:
            return {}
        if isinstance(seed, (int, np.integer)):
            if mask is not None and self._started:
                raise HubError(
                    "reset(seed=..., options={'reset_mask': ...}) is not supported: hub seeds "
                    "a whole env. Seed with a full reset (reset(seed=s)); later partial resets "
                    "continue from those seeds."
                )
            self.hub_env.set_seed(int(seed))
            return {}
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(
                "If seeds are passed as a list the length must match num_envs="
                f"{self.num_envs} but got length={len(seeds)}."
            )
        if all(s is None for s in seeds):
            return {}
        if getattr(self.hub_env, "is_vector", None) is True and (mask is None or not self._started):
            return {"seed": [None if s is None else int(s) for s in seeds]}
        first = seeds[0]
        consecutive = first is not None and all(
            s == first + i for i, s in enumerate(seeds) if s is not None
        )
        if consecutive and getattr(self.hub_env, "is_vector", None) is True:
            self.hub_env.set_seed(int(first))
            return {}
        raise HubError(
            f"{type(self.hub_env).__name__} takes one seed for all its sub-envs (hub derives "
            "each sub-env's seed from it); pass reset(seed=int). Per-sub-env seed lists work "
            "for the gym/gymnasium namespaces' vector envs (hub.make_env('gymnasium:<id>', "
            "num_envs=N))."
        )

    # ------------------------------------------------------------------ step
    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every sub-env, resetting finished ones in this env's autoreset mode."""
        if not self._started:
            raise gymnasium.error.ResetNeeded("call reset() before step().")
        self._write_action(actions)
        mode = self._mode
        restart = self._autoreset
        pending = restart.any()
        if mode == DISABLED and pending:
            raise HubError(
                f"sub-envs {np.flatnonzero(restart).tolist()} ended their episode and this env's "
                "autoreset mode is DISABLED: reset them first with "
                "reset(options={'reset_mask': terminated | truncated})."
            )
        stepper = self._stepper
        if mode == NEXT_STEP and pending:
            nxt = stepper.step(step_mask=~restart)
        else:
            nxt = stepper.step()
        source = stepper.td if nxt is None else nxt
        terminated, truncated, reward = self._flags(source, stepper)
        if mode == NEXT_STEP:
            if pending:  # the sub-envs that ended last step start again, not stepped
                stepper.reset(mask=restart)
                terminated[restart] = False
                truncated[restart] = False
                reward[restart] = 0.0
            self._autoreset = terminated | truncated
            info = self._info.vector(stepper.td)
            return self._read_td(stepper.td), reward, terminated, truncated, info
        done = terminated | truncated
        if mode == DISABLED:
            self._autoreset = done
            info = self._info.vector(source)
            return self._read_td(source), reward, terminated, truncated, info
        # same step
        if not done.any():
            info = self._info.vector(source)
            return self._read_td(source), reward, terminated, truncated, info
        final_info = self._info.vector(source, done)
        last = self._read_td(source)
        finals = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(done):
            finals[i] = _row(last, i)
        stepper.reset(mask=done)
        info = self._info.vector(stepper.td)
        if _HAS_MODES or _VERSION >= Version("1.0"):
            info.update(
                final_obs=finals,
                _final_obs=done.copy(),
                final_info=final_info,
                _final_info=done.copy(),
            )
        else:  # gymnasium < 1.0: one dict per sub-env
            rows = [{} for _ in range(self.num_envs)]
            for name, value in final_info.items():
                if not name.startswith("_"):
                    for i in np.flatnonzero(done):
                        rows[i][name] = value[i]
            info.update(
                final_observation=finals,
                _final_observation=done.copy(),
                final_info=np.array(
                    [rows[i] if d else None for i, d in enumerate(done)], dtype=object
                ),
                _final_info=done.copy(),
            )
        return self._read_td(stepper.td), reward, terminated, truncated, info

    def _flags(self, td: Any, stepper: Stepper) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = self.num_envs
        terminated = td.get("terminated").reshape(n, -1).any(-1).numpy()
        truncated = td.get("truncated").reshape(n, -1).any(-1).numpy()
        reward = stepper.reward if td is stepper.td else td.get(stepper.reward_key)
        reward = reward.reshape(n, -1).sum(-1).double().numpy()
        return terminated, truncated, reward

    # ------------------------------------------------------------------ the rest
    def render(self) -> tuple[Any, ...] | None:
        """One RGB frame per sub-env (``render_mode="rgb_array"``); ``None`` without a mode."""
        if self.render_mode is None:
            return None
        frames = _render.frames(self.hub_env, self._stepper.td)
        return tuple(frames[i] for i in range(self.num_envs))

    def close(self, **kwargs: Any) -> None:
        """Close the hub env."""
        if not self.closed:
            self.hub_env.close()
            self.closed = True


def _row(obs: Any, index: int) -> Any:
    if isinstance(obs, dict):
        return {k: v[index] for k, v in obs.items()}
    if isinstance(obs, tuple):
        return tuple(v[index] for v in obs)
    return obs[index]
