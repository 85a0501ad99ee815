"""``MultiThreadedEnv`` and ``MultiThreadedEnvWrapper``: EnvPool's C++ thread pool as one hub env.

One EnvPool object runs ``num_workers`` envs in C++ threads; hub sees one env of batch size
``[num_workers]`` (native batching: no process, no per-env Python loop). The step path is a
:class:`~hub_envpool.runner.PoolRunner`: EnvPool's C++ calls and zero-copy tensors.

What is normalised (see ``docs/envpool.md``):

* autoreset: EnvPool's next-step autoreset never shows; an env whose episode ended waits until
  hub resets it (``step_and_maybe_reset``, ``rollout``, or ``reset`` with ``"_reset"``), and hub
  resets exactly those env ids (:mod:`hub_envpool.autoreset`);
* seeding: EnvPool seeds only when a pool is built, so ``MultiThreadedEnv.set_seed`` builds a
  new pool (at the next ``reset``); a wrapped pool cannot be reseeded;
* specs come from EnvPool's spaces, gym or gymnasium ones alike, whatever gym backend is active.

Example:
    >>> env = MultiThreadedEnv(4, "CartPole-v1", categorical_action_encoding=True)
    >>> data = env.rollout(600, break_when_any_done=False)
    >>> data.batch_size, bool((data["next", "reward"] == 1).all())  # no fabricated step
    (torch.Size([4, 600]), True)
"""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

import hub
from hub.batching import AsyncCallError
from hub.specs import Categorical, Composite, Unbounded
from hub_envpool import compat, specs
from hub_envpool.actions import make_action_writer
from hub_envpool.runner import PoolRunner
from hub_envpool.threads import default_num_threads

__all__ = ["MultiThreadedEnvWrapper", "MultiThreadedEnv"]


_INT32 = 2**31


class MultiThreadedEnvWrapper(hub.EnvWrapper):
    """Wraps an EnvPool object (``envpool.make(...)``) as a hub env.

    The batch size is ``[num_envs]``; ``[batch_size]`` in EnvPool's async mode
    (``batch_size < num_envs``: use :meth:`step_send` / :meth:`step_fetch`); ``[]`` with
    ``unbatched=True`` and a single env.

    Args:
        env: the EnvPool object (any ``env_type``; its spaces give the specs).

    Keyword Args:
        categorical_action_encoding: discrete actions as integers (``Categorical``) instead of
            one-hot vectors (``OneHot``, the default).
        frame_skip: repeat each action this many times (rewards summed, last observation kept;
            an env whose episode ends stops there). EnvPool's own frame skip (4 for Atari) is a
            task option: ``envpool.make(..., frame_skip=k)``.
        unbatched: with a single env, give it batch size ``[]``.
        infos: EnvPool's info arrays to keep as observation entries ``("info", name)`` (Atari's
            ``lives``, ``reward``, ``terminated``...): ``True`` for all, or their names;
            the exports hand them back in their ``info`` dicts (:mod:`hub.export.infos`).
        device: where the env's tensors go (default: CPU, zero-copy).
        **kwargs: the :class:`hub.EnvBase` arguments (``checks``, ...).

    Example:
        >>> import envpool
        >>> pool = envpool.make("Pendulum-v1", env_type="gymnasium", num_envs=2, seed=0)
        >>> env = MultiThreadedEnvWrapper(pool)
        >>> env.rollout(3)["next", "observation"].shape
        torch.Size([2, 3, 3])
    """

    #: a partial reset keeps the input's rows of the envs it does not reset (PoolRunner.reset)
    masks_partial_resets = True

    def __init__(
        self,
        env: Any = None,
        *,
        categorical_action_encoding: bool = False,
        frame_skip: int = 1,
        unbatched: bool = False,
        infos: bool | Sequence[str] = False,
        **kwargs: Any,
    ) -> None:
        self.infos = infos
        if env is not None:
            if not all(hasattr(env, name) for name in ("spec", "config", "_recv", "_send")):
                raise TypeError(
                    "MultiThreadedEnvWrapper wraps an EnvPool object, as envpool.make(task_id, "
                    f"env_type='gymnasium', num_envs=N) returns; got {type(env).__name__}."
                )
            config = env.config
            self._sizes(int(config["num_envs"]), int(config["batch_size"]), unbatched)
        elif not hasattr(self, "num_workers"):
            raise TypeError(
                "MultiThreadedEnvWrapper needs the EnvPool object to wrap: "
                "MultiThreadedEnvWrapper(envpool.make(task_id, env_type='gymnasium', num_envs=N))."
            )
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be at least 1, got {frame_skip}.")
        if frame_skip > 1 and self.is_async:
            raise ValueError(
                "frame_skip > 1 is not available in async mode (batch_size < num_workers)."
            )
        self.categorical_action_encoding = categorical_action_encoding
        self.frame_skip = int(frame_skip)
        self.unbatched = unbatched
        kwargs["batch_size"] = self._batch
        super().__init__(env, **kwargs)

    def _sizes(self, num_workers: int, pool_batch: int, unbatched: bool) -> None:
        if num_workers < 1:
            raise ValueError(f"num_workers must be at least 1, got {num_workers}.")
        pool_batch = pool_batch or num_workers
        if not 1 <= pool_batch <= num_workers:
            raise ValueError(
                f"batch_size must be between 1 and num_workers ({num_workers}), got {pool_batch}."
            )
        if unbatched and num_workers != 1:
            raise ValueError(f"unbatched=True needs a single env, got num_workers={num_workers}.")
        self.num_workers = num_workers
        self.pool_batch_size = pool_batch
        self.is_async = pool_batch < num_workers
        self._batch = () if unbatched else (pool_batch,)
        self._pool_batch_size = torch.Size(self._batch)

    # ------------------------------------------------------------------ EnvPool's description
    def _task_spec(self) -> Any:
        """EnvPool's ``EnvSpec`` of the task."""
        return self._env.spec

    def _spaces(self) -> tuple[Any, Any]:
        """The observation and action spaces, as the EnvPool object gives them."""
        pool = self._env
        if hasattr(pool, "observation_space"):
            return pool.observation_space, pool.action_space
        spec = pool.spec  # a dm_env pool: take gymnasium's view of the same spec
        return spec.gymnasium_observation_space, spec.gymnasium_action_space

    def _pool(self) -> Any:
        """The EnvPool object (built on demand by :class:`MultiThreadedEnv`)."""
        return self._env

    # ------------------------------------------------------------------ construction
    def _check_kwargs(self, kwargs: dict[str, Any]) -> None:
        pass

    def _make_specs(self, env: Any) -> None:
        compat.check_runtime()
        spec = self._task_spec()
        if int(spec.config.max_num_players) > 1:
            raise hub.errors.HubError(
                "multi-player EnvPool tasks (max_num_players > 1) are not supported by hub yet."
            )
        action_keys = list(spec._action_keys)
        if action_keys[:2] != ["env_id", "players.env_id"] or len(action_keys) != 3:
            raise hub.errors.HubError(
                f"EnvPool task with the action arrays {action_keys[2:]}: hub supports tasks with "
                "one action array (dict actions are not supported yet)."
            )
        with warnings.catch_warnings():  # gymnasium warns about EnvPool's float64 bounds
            warnings.simplefilter("ignore", UserWarning)
            obs_space, act_space = self._spaces()
        batch = self._batch
        device = self.device
        obs = specs.observation_spec(obs_space, batch, device)
        if self.is_async:
            obs["env_id"] = Categorical(self.num_workers, shape=batch, device=device)
            obs["is_init"] = specs.flag_spec(batch, device)
        infos = specs.info_names(spec._state_keys, self.infos)
        if infos:
            obs["info"] = specs.info_spec(spec, infos, batch, device)
        self.observation_spec = obs
        action = specs.action_spec(act_space, batch, device, self.categorical_action_encoding)
        self.action_spec = action
        self.reward_spec = Unbounded((*batch, 1), device=device, dtype=torch.float32)
        flag = specs.flag_spec(batch, device)
        self.done_spec = Composite(
            done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=batch, device=device
        )
        array_spec = spec.action_array_spec[action_keys[-1]]
        dims = tuple(int(d) for d in array_spec.shape)
        self._write_action = make_action_writer(
            action,
            act_space,
            np.dtype(array_spec.dtype),
            dims[1:] if dims and dims[0] == -1 else dims,
            rows=self.pool_batch_size,
            unbatched=self.unbatched,
        )
        layout = specs.state_layout(
            spec._state_keys, dict_obs=specs.is_dict_space(obs_space), infos=infos
        )
        self._runner = PoolRunner(
            layout,
            num_workers=self.num_workers,
            batch_size=self.pool_batch_size,
            unbatched=self.unbatched,
            device=self.device,
            frame_skip=self.frame_skip,
        )
        self._obs_keys = [key for key, _ in layout.observations]
        if env is not None:
            self._attach(env)

    def _attach(self, pool: Any) -> None:
        """Take EnvPool's C++ calls from ``pool``, checking they lay data out as its spec says."""
        raw = compat.raw_calls(pool)
        declared = list(self._task_spec()._state_keys)
        if list(raw.state_keys) != declared:
            raise hub.errors.HubError(
                f"the EnvPool object returns {list(raw.state_keys)} but its spec declares "
                f"{declared}."
            )
        self._runner.attach(raw)

    def _mask_of(self, rows: Any) -> np.ndarray | None:
        """A row mask of the hooks as one bool per env (``None``: every env)."""
        if rows is None:
            return None
        mask = np.asarray(rows, dtype=bool).reshape(-1)
        return None if mask.all() else mask

    # ------------------------------------------------------------------ the contract
    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> dict[Any, torch.Tensor]:
        if kwargs:
            raise TypeError(
                f"EnvPool's reset takes no options (got {sorted(kwargs)}); seed with "
                "env.set_seed(seed)."
            )
        self._pool()
        runner = self._runner
        mask = self._mask_of(rows)
        if self.is_async:
            if mask is not None:
                raise hub.errors.HubError(
                    "in async mode reset() restarts every env; an env whose episode ended "
                    "restarts with the next step_send() to it (see docs/envpool.md, 'Async mode')."
                )
            return runner.reset_async()
        if mask is None:
            return runner.reset(None)
        return runner.reset(mask, self._inputs(inputs) if inputs is not None else None)

    def _inputs(self, tensordict: TensorDictBase) -> dict[Any, np.ndarray]:
        """The observations and done flags of a partial reset's input, as arrays (the rows of
        the envs that are not reset are kept from them: ``masks_partial_resets``)."""
        inputs = {}
        for key in (*self._obs_keys, "done", "terminated", "truncated"):
            value = tensordict.get(key, None)
            if isinstance(value, torch.Tensor):
                inputs[key] = value.numpy(force=True)
        return inputs

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[Any, torch.Tensor]:
        runner = self._runner
        if runner.raw is None or self.is_async:
            self._cannot_step()
        return runner.step(self._write_action(inputs["action"]), self._mask_of(rows))

    def _step_reset_arrays(
        self, inputs: Any, rows: Any = None
    ) -> tuple[dict[Any, torch.Tensor], dict[Any, torch.Tensor] | None]:
        """Step, then reset the envs that ended, by their env ids: EnvPool's output said which
        ended, and the runner sent their reset as soon as the step came back."""
        out = self._step_arrays(inputs, rows)
        runner = self._runner
        return out, runner.reset_ended() if runner.stepped_all else None

    def _cannot_step(self) -> None:
        if self.is_async:
            raise hub.errors.HubError(
                "in async mode (batch_size < num_workers) each step returns whichever envs "
                "finish first, so step() cannot pair a step with its result: use "
                "env.step_send(td) and env.step_fetch() (see docs/envpool.md, 'Async mode')."
            )
        self._runner.pending.check_step(None)  # says "reset first"

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            return
        raise hub.errors.HubError(
            "EnvPool seeds its envs only when a pool is built, and a wrapped pool cannot be "
            "rebuilt. Build it with envpool.make(..., seed=S), or use "
            "hub_envpool.MultiThreadedEnv (or hub.make_env('envpool:<id>')), whose set_seed "
            "builds a new pool."
        )

    # ------------------------------------------------------------------ async mode
    def step_send(self, tensordict: TensorDictBase) -> None:
        """Async mode: send the actions of ``tensordict`` to the envs of its ``"env_id"`` entry.

        A row whose ``done`` flag was set in the last fetch restarts that env: its action is not
        used, and the env's next row (with ``is_init`` set) is the first of a new episode.

        Example:
            >>> env = MultiThreadedEnv(4, "CartPole-v1", batch_size=2)
            >>> td = env.reset()
            >>> env.step_send(env.rand_action(td))
            >>> env.step_fetch()["env_id"].shape
            torch.Size([2])
        """
        self._async_only("step_send")
        self.check_step_input(tensordict, "step_send")  # shape, dtype (or a cast), values
        action = tensordict.get("action")
        ids = tensordict.get("env_id").reshape(-1).cpu().numpy()
        if ids.size and (ids.min() < 0 or ids.max() >= self.num_workers):
            raise hub.errors.SpecMismatchError(
                "env_id",
                f"env ids in [0, {self.num_workers})",
                f"values {ids.tolist()[:16]}",
                where="step_send",
            )
        self._runner.send(self._write_action(action), ids.astype(np.int32))

    def step_fetch(self) -> TensorDictBase:
        """Async mode: wait for the next ``batch_size`` envs to finish a step and return them.

        The result holds the observations, ``"reward"``, the done flags, ``"env_id"`` (whose
        row it is) and ``"is_init"`` (the row starts an episode: a reset's output, not a
        transition, and its reward is 0).
        """
        self._async_only("step_fetch")
        return self._packed(self._runner.fetch())

    def _packed(self, out: dict[Any, torch.Tensor]) -> TensorDictBase:
        return self.env_keys.outputs.build(out, None, "EnvPool async output")[0]

    def _async_only(self, what: str) -> None:
        if not self.is_async:
            raise AsyncCallError(
                f"{what}() is for EnvPool's async mode (batch_size < num_workers); this env "
                "steps all its envs at once: use env.step(td)."
            )
        if self.is_closed:
            raise hub.errors.ClosedEnvError(
                f"{what}() was called on a closed {type(self).__name__}."
            )
        if self._runner.raw is None:
            raise AsyncCallError(f"{what}() before reset(): call env.reset() first.")

    def _close(self) -> None:
        self._runner.detach()  # first: it may collect a reset still under way
        super()._close()

    # ------------------------------------------------------------------ rendering
    @property
    def render_mode(self) -> str | None:
        """The pool's render mode (``envpool.make(..., render_mode=...)``), else ``None``."""
        return getattr(self.__dict__.get("_env"), "render_mode", None)

    def set_render_mode(self, mode: str | None) -> None:
        """A wrapped pool renders in the mode it was made with: anything else is an error."""
        if mode is not None and self.render_mode != mode:
            raise hub.errors.HubError(
                f"this EnvPool pool was made with render_mode={self.render_mode!r} and cannot be "
                f"switched to {mode!r}: make it with envpool.make(..., render_mode={mode!r}), or "
                f"use hub.make_env('envpool:<task>', num_envs=N, render_mode={mode!r})."
            )

    def render_frames(
        self, tensordict: TensorDictBase | None = None, env_ids: Any = None
    ) -> np.ndarray:
        """RGB frames drawn by EnvPool's renderer (EnvPool >= 1.0): ``uint8 [num_workers, H, W,
        3]`` (``[H, W, 3]`` for an unbatched env), or those of the envs ``env_ids`` only
        (``[len(env_ids), H, W, 3]``). ``tensordict`` is not needed.

        The pool must be made to render: ``hub.make_env("envpool:Pong-v5", num_envs=8,
        render_mode="rgb_array")`` (Atari frames are then the full 210 x 160 colour screen).

        Example (EnvPool >= 1.0; tests/plugins/hub_envpool checks it where it is installed):
            >>> env = hub.make_env("envpool:Pong-v5", num_envs=2, render_mode="rgb_array")  # doctest: +SKIP
            >>> _ = env.reset()  # doctest: +SKIP
            >>> env.render_frames().shape, env.render_frames(env_ids=[1]).shape  # doctest: +SKIP
            ((2, 210, 160, 3), (1, 210, 160, 3))
        """
        pool = self._pool()
        render = getattr(pool, "render", None)
        if not callable(render):
            raise hub.errors.NoFramesError(
                "this EnvPool object cannot render: rendering needs EnvPool >= 1.0 and an open "
                "env (pip install -U envpool); or record its image observation instead."
            )
        ids = np.arange(self.num_workers) if env_ids is None else np.asarray(env_ids).reshape(-1)
        try:
            frames = np.asarray(render(env_ids=ids.astype(np.int32)))
        except RuntimeError as err:
            raise hub.errors.NoFramesError(
                f"EnvPool cannot render this pool ({err}). Make the env with "
                'render_mode="rgb_array", e.g. hub.make_env("envpool:Pong-v5", num_envs=8, '
                'render_mode="rgb_array") or `hub rollout ... -k render_mode=rgb_array`.'
            ) from err
        return frames[0] if self.unbatched and env_ids is None else frames

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(num_workers={self.num_workers}, "
            f"batch_size={list(self.batch_size)}, device={self.device or 'cpu'})"
        )


class MultiThreadedEnv(MultiThreadedEnvWrapper):
    """``num_workers`` EnvPool envs of the task ``env_name``, as one hub env.

    The pool is built at the first ``reset`` (the specs come from EnvPool's ``make_spec``, which
    builds no env), so a ``set_seed`` before it costs nothing; after it, ``set_seed`` closes the
    pool and the next ``reset`` builds one with the new seed. EnvPool derives each env's seed
    from the pool's; hub passes ``seed % 2**31`` (EnvPool takes int32 seeds).

    Args:
        num_workers: the number of envs.
        env_name: an EnvPool task id (``envpool.list_all_envs()``); ``"ALE/Pong-v5"`` is read
            as ``"Pong-v5"``.

    Keyword Args:
        create_env_kwargs: task options for ``envpool.make`` (``num_threads``, ``frame_skip``,
            ``img_height``, ``seed``, ...). Without ``num_threads``, the pool gets one thread per
            CPU of the process's affinity mask, up to its batch size
            (:func:`hub_envpool.threads.default_num_threads`).
        categorical_action_encoding: discrete actions as integers instead of one-hot vectors.
        device: where the env's tensors go (default: CPU, zero-copy).
        frame_skip: repeat each action this many times in hub (see
            :class:`MultiThreadedEnvWrapper`); EnvPool's own frame skip is a
            ``create_env_kwargs`` entry.
        batch_size: EnvPool's async mode when below ``num_workers``: the env's batch size is
            then ``[batch_size]`` and it steps through :meth:`step_send` / :meth:`step_fetch`.
        unbatched: with ``num_workers=1``, give the env batch size ``[]``.
        env_type: ``"gym"`` or ``"gymnasium"`` (default: the active gym backend's; only EnvPool
            < 1.1 makes a difference: gym spaces or gymnasium spaces).
        **kwargs: the :class:`hub.EnvBase` arguments (``checks``, ...).

    Example:
        >>> env = MultiThreadedEnv(8, "Pong-v5")
        >>> env.batch_size, env.observation_spec["observation"].shape
        (torch.Size([8]), torch.Size([8, 4, 84, 84]))
    """

    def __init__(
        self,
        num_workers: int,
        env_name: str,
        *,
        create_env_kwargs: dict[str, Any] | None = None,
        categorical_action_encoding: bool = False,
        device: Any = None,
        frame_skip: int = 1,
        batch_size: int | None = None,
        unbatched: bool = False,
        env_type: str | None = None,
        **kwargs: Any,
    ) -> None:
        create = dict(create_env_kwargs or {})
        for name in ("num_envs", "batch_size", "env_type", "task_id"):
            if name in create:
                raise ValueError(
                    f"create_env_kwargs may not set {name!r}: pass num_workers, batch_size or "
                    "env_type to MultiThreadedEnv instead."
                )
        if "seed" in create:
            create["seed"] = int(create["seed"]) % _INT32
        self.env_name = env_name.replace("ALE/", "")
        self.create_env_kwargs = create
        self.env_type = env_type or compat.env_type_for(_active_gym_backend())
        if self.env_type not in ("gym", "gymnasium"):
            raise ValueError(f"env_type must be 'gym' or 'gymnasium', got {self.env_type!r}.")
        self._sizes(int(num_workers), int(batch_size or num_workers), unbatched)
        super().__init__(
            None,
            categorical_action_encoding=categorical_action_encoding,
            frame_skip=frame_skip,
            unbatched=unbatched,
            device=device,
            **kwargs,
        )

    def _pool_kwargs(self) -> dict[str, Any]:
        kwargs = dict(self.create_env_kwargs)
        kwargs["num_envs"] = self.num_workers
        kwargs["batch_size"] = self.pool_batch_size
        if not kwargs.get("num_threads"):  # one thread per CPU the process may use
            threads = default_num_threads(self.pool_batch_size)
            if threads is not None:
                kwargs["num_threads"] = threads
        return kwargs

    def _build_env(self, **kwargs: Any) -> Any:
        import envpool

        try:
            self._spec = envpool.make_spec(self.env_name, **self._pool_kwargs())
        except KeyError:
            known = compat.list_task_ids()
            if self.env_name in known:
                raise
            close = difflib.get_close_matches(self.env_name, known, n=5)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise hub.errors.UnknownEnvError(
                f"EnvPool has no task {self.env_name!r}.{hint} envpool.list_all_envs() (or "
                "`hub envs envpool`) lists them.",
                env_id=self.env_name,
                suggestions=tuple(close),
            ) from None
        return None  # the pool itself is built at the first reset

    def _task_spec(self) -> Any:
        return self._spec

    def _spaces(self) -> tuple[Any, Any]:
        return compat.spaces_of(self._spec, self.env_type)

    def _pool(self) -> Any:
        if self._env is None and not self.is_closed:
            import envpool

            with warnings.catch_warnings():  # gymnasium warns about EnvPool's float64 bounds
                warnings.simplefilter("ignore", UserWarning)
                pool = envpool.make(self.env_name, env_type=self.env_type, **self._pool_kwargs())
            self._attach(pool)
            self._env = pool
        return self._env

    @property
    def render_mode(self) -> str | None:
        """The render mode the pool is made with (``make_env(..., render_mode=...)``)."""
        return self.create_env_kwargs.get("render_mode")

    def set_render_mode(self, mode: str | None) -> None:
        """Make the next pool with ``render_mode=mode`` (EnvPool fixes it when a pool is built:
        a pool already built is rebuilt at the next ``reset``, as for ``set_seed``)."""
        if mode is None or self.render_mode == mode:
            return
        self.create_env_kwargs["render_mode"] = mode
        self._drop_pool()

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            return
        self.create_env_kwargs["seed"] = int(seed) % _INT32
        self._drop_pool()

    def _drop_pool(self) -> None:
        if self._env is not None:
            pool, self._env = self._env, None
            self._runner.detach()
            close = getattr(pool, "close", None)
            if callable(close):
                close()

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(env={self.env_name!r}, num_workers={self.num_workers}, "
            f"batch_size={list(self.batch_size)}, device={self.device or 'cpu'})"
        )


def _active_gym_backend() -> str | None:
    """The active member of the gym family (``None`` when no plugin declares the family)."""
    try:
        return hub.dispatch.active_backend("gym")
    except hub.errors.HubError:
        return None
