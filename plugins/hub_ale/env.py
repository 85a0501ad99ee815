"""``AleEnv``: ale-py's C++ vector env of Atari games as one hub env.

The keys, specs and options are those of ``envpool:<Game>-v5``: ``"observation"`` (``uint8``,
4 stacked 84 x 84 grayscale frames), a one-hot action over the game's minimal action set
(``Categorical`` with ``categorical_action_encoding=True``), a ``float32`` reward and the three
done flags; the frame preprocessing options and their defaults are EnvPool's
(:mod:`hub_ale.options`). The step path is an :class:`~hub_ale.runner.AleRunner`.

Example:
    >>> env = AleEnv("Pong-v5", num_envs=2, categorical_action_encoding=True)
    >>> td = env.reset(seed=0)
    >>> env.step(env.rand_action(td))["next", "reward"].shape
    torch.Size([2, 1])
"""

from __future__ import annotations

import difflib
import warnings
from typing import Any

import numpy as np
import torch

import hub
from hub.specs import Categorical, Composite, OneHot, Unbounded
from hub_ale.options import default_threads, vector_env_kwargs
from hub_ale.runner import AleRunner

__all__ = ["AleEnv", "game_ids", "rom_of"]


def game_ids() -> dict[str, str]:
    """``{"Pong-v5": "pong", ...}``: hub's id of every ROM ale-py ships, and the ROM.

    Example:
        >>> game_ids()["MsPacman-v5"]
        'ms_pacman'
    """
    from ale_py import roms

    return {f"{rom.title().replace('_', '')}-v5": rom for rom in roms.get_all_rom_ids()}


def rom_of(env_id: str) -> str:
    """The ROM of ``env_id`` (``"Pong-v5"``, ``"ALE/Pong-v5"``).

    Raises:
        UnknownEnvError: no ROM of that name ships with ale-py.

    Example:
        >>> rom_of("ALE/Breakout-v5")
        'breakout'
    """
    ids = game_ids()
    name = env_id.removeprefix("ALE/")
    if name in ids:
        return ids[name]
    close = difflib.get_close_matches(name, list(ids), n=5)
    hint = f" Did you mean {', '.join(close)}?" if close else ""
    raise hub.errors.UnknownEnvError(
        f"ale-py ships no game {env_id!r}.{hint} `hub envs ale` lists them.",
        env_id=env_id,
        suggestions=tuple(close),
    )


class AleEnv(hub.EnvBase):
    """``num_envs`` Atari games of one kind in ale-py's C++ vector env, as one hub env.

    Args:
        env_id: the game, as ``"Pong-v5"`` (``hub envs ale`` lists them).
        num_envs: the number of sub-envs (``None``: one env of batch size ``[]``).

    Keyword Args:
        categorical_action_encoding: actions as integers instead of one-hot vectors.
        render_mode: ``"rgb_array"`` to render the full colour screen (``render()``; costs a
            second emulation, see :mod:`hub_ale.runner`).
        **kwargs: EnvPool's Atari options or ale-py's (:mod:`hub_ale.options`), and the
            :class:`hub.EnvBase` arguments (``checks``, ...). The env lives on the CPU.

    Every sub-env is stepped at each step (ale-py's vector env has no partial step).
    """

    #: ale-py's masked reset keeps the frames of the sub-envs it does not reset
    masks_partial_resets = True

    def __init__(
        self,
        env_id: str,
        num_envs: int | None = None,
        *,
        categorical_action_encoding: bool = False,
        render_mode: str | None = None,
        checks: bool = False,
        spec_locked: bool = True,
        device: Any = None,
        **options: Any,
    ) -> None:
        if device is not None and torch.device(device).type != "cpu":
            raise hub.errors.HubError(
                f"ale: envs run on the CPU (got device={device!r}); move their data with "
                "hub.transforms.DeviceCastTransform."
            )
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}.")
        batch = () if num_envs is None else (int(num_envs),)
        super().__init__(batch_size=batch, checks=checks, spec_locked=spec_locked)
        self.env_id = env_id.removeprefix("ALE/")
        self.game = rom_of(env_id)
        self.num_envs = 1 if num_envs is None else int(num_envs)
        self.categorical_action_encoding = categorical_action_encoding
        kwargs = vector_env_kwargs(options)
        kwargs.setdefault("num_threads", default_threads(self.num_envs))
        self._vector_kwargs = kwargs
        self._render_mode = render_mode
        self._runner = AleRunner(self.game, self.num_envs, kwargs, render=render_mode is not None)
        self._make_specs(batch)

    def _make_specs(self, batch: tuple[int, ...]) -> None:
        vec = self._runner.vec
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            obs = hub.convert_spec(vec.single_observation_space, batch_size=batch)
            action = hub.convert_spec(
                vec.single_action_space,
                batch_size=batch,
                categorical_action_encoding=self.categorical_action_encoding,
            )
        self.observation_spec = Composite(observation=obs, shape=batch)
        self.action_spec = action
        self.reward_spec = Unbounded((*batch, 1), dtype=torch.float32)
        flag = Categorical(2, shape=(*batch, 1), dtype=torch.bool)
        self.done_spec = Composite(
            done=flag, terminated=flag.clone(), truncated=flag.clone(), shape=batch
        )
        self._one_hot = isinstance(action, OneHot)

    # ------------------------------------------------------------------ the hooks
    def _reset_arrays(
        self, rows: torch.Tensor | None = None, inputs: Any = None, **kwargs: Any
    ) -> dict[str, Any]:
        seed = kwargs.pop("seed", None)
        if kwargs:
            raise TypeError(
                f"ale: envs take no reset options (got {sorted(kwargs)}); seed with "
                "env.set_seed(seed) or reset(seed=seed)."
            )
        if seed is not None:
            self.set_seed(seed)  # refuses a seed outside the backend's range
        mask = None if rows is None else _numpy(rows).reshape(-1).astype(bool, copy=False)
        return self._runner.reset(None if mask is None or mask.all() else mask)

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[str, Any]:
        if rows is not None and not _numpy(rows).all():
            raise hub.errors.HubError(
                "ale: envs step every sub-env at once (ale-py's vector env has no partial "
                "step); step without '_step', or use envpool: or batching='serial'."
            )
        action = _numpy(inputs["action"])
        if self._one_hot:
            action = action.argmax(-1)
        array = np.ascontiguousarray(action, dtype=np.int32).reshape(self.num_envs)
        return self._runner.step(array)

    def _step_reset_arrays(self, inputs: Any, rows: Any = None) -> tuple[dict, dict | None]:
        """Step, then reset the sub-envs that ended in that step with ale-py's masked reset."""
        out = self._step_arrays(inputs, rows)
        runner = self._runner
        if not runner.ended.any():
            return out, None
        return out, runner.reset(runner.ended.copy())

    def _set_seed(self, seed: int | None) -> None:
        self._runner.seed(seed)

    def _close(self) -> None:
        self._runner.close()

    # ------------------------------------------------------------------ rendering
    @property
    def render_mode(self) -> str | None:
        """``"rgb_array"`` when the env renders, else ``None``."""
        return self._render_mode

    def set_render_mode(self, mode: str | None) -> None:
        """Render (``"rgb_array"``) or not from the next reset on: the env's vector env is
        rebuilt, so call it before ``reset``."""
        if mode == self._render_mode:
            return
        if mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {mode!r}.")
        self._runner.close()
        self._runner = AleRunner(
            self.game, self.num_envs, self._vector_kwargs, render=mode is not None
        )
        self._render_mode = mode

    def render_frames(self, tensordict: Any = None) -> np.ndarray:
        """The colour screen of every sub-env, ``uint8 [num_envs, 210, 160, 3]``
        (``render_mode="rgb_array"``)."""
        return self._runner.frames()

    def render(self) -> np.ndarray:
        """The colour screens (``[210, 160, 3]`` for an env of batch size ``[]``).

        Example:
            >>> env = AleEnv("Pong-v5", num_envs=2, render_mode="rgb_array")
            >>> _ = env.reset(seed=0)
            >>> env.render().shape
            (2, 210, 160, 3)
        """
        frames = self._runner.frames()
        return frames[0] if not self.batch_size else frames

    def __repr__(self) -> str:
        return f"{type(self).__name__}(env={self.env_id!r}, batch_size={list(self.batch_size)})"


def _numpy(value: Any) -> np.ndarray:
    """``value`` (a numpy array, or a tensor anywhere) as a numpy array."""
    if isinstance(value, torch.Tensor):
        return value.numpy(force=True)
    return np.asarray(value)
