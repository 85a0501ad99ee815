"""``AleRunner``: ale-py's C++ vector env (``AtariVectorEnv``), stepped in hub's terms.

The runner builds the vector env in ale-py's next-step autoreset mode and never lets that
autoreset happen: the step that ends an episode returns its last frames, the ended sub-envs are
refused a step until they are reset, and hub resets them with ale-py's masked reset
(``reset_mask``), which also clears the pending autoreset. The data is that of a vector env
without autoreset. ale-py allocates new arrays for every output, so they go to hub as they are
(no copy).

Seeding follows ale-py's (and EnvPool's, and hub's) rule: a full reset after :meth:`AleRunner.seed`
with ``s`` seeds sub-env ``i`` with ``s + i``; later resets continue each sub-env's generator.

Rendering: ale-py's vector env returns only its preprocessed frames. With ``render=True`` the
runner keeps a second vector env with the same game, options and seeds that returns the full
colour screen (210 x 160, no stacking, no pooling) and steps it with the same actions: the
emulator is deterministic given its seed and actions, so its screens are those of the first
env (a test checks that both report the same rewards, lives and frame numbers). It doubles the
emulation cost, and only exists when asked for.

Example:
    >>> import numpy as np
    >>> runner = AleRunner("pong", 2, {"num_threads": 1})
    >>> runner.seed(0)
    >>> runner.reset(None)["observation"].shape
    (2, 4, 84, 84)
    >>> out = runner.step(np.zeros(2, np.int32))
    >>> sorted(out)
    ['observation', 'reward', 'terminated', 'truncated']
"""

from __future__ import annotations

import secrets
from typing import Any

import numpy as np

import hub

__all__ = ["AleRunner", "RENDER_OPTIONS"]

#: what the render twin changes in the options: the full colour screen, one frame, unpooled
RENDER_OPTIONS = {
    "grayscale": False,
    "stack_num": 1,
    "img_height": 210,
    "img_width": 160,
    "maxpool": False,
}

_SEEDS = 2**31  # ale-py takes int32 seeds


def _vector_env(game: str, num_envs: int, kwargs: dict[str, Any]) -> Any:
    from ale_py.vector_env import AtariVectorEnv
    from gymnasium.vector import AutoresetMode

    return AtariVectorEnv(game, num_envs, autoreset_mode=AutoresetMode.NEXT_STEP, **kwargs)


class AleRunner:
    """Resets and steps one ``AtariVectorEnv`` of ``num_envs`` sub-envs.

    Args:
        game: the ROM id (``"pong"``, ``"ms_pacman"``).
        num_envs: the number of sub-envs.
        kwargs: ``AtariVectorEnv``'s other arguments (see :mod:`hub_ale.options`).
        render: keep a second vector env for :meth:`frames` (see the module docstring).
    """

    def __init__(
        self, game: str, num_envs: int, kwargs: dict[str, Any], *, render: bool = False
    ) -> None:
        self.game = game
        self.num_envs = int(num_envs)
        self.kwargs = dict(kwargs)
        self.vec = _vector_env(game, self.num_envs, self.kwargs)
        self.ale = self.vec.ale
        self.twin: Any = None
        if render:
            self.twin = _vector_env(game, self.num_envs, {**self.kwargs, **RENDER_OPTIONS}).ale
        self.paddle = np.ones(self.num_envs, dtype=np.float32)
        self.all_ids = np.arange(self.num_envs, dtype=np.int64)
        self.pending_seed: int | None = None
        self.started = False
        self.ended = np.zeros(self.num_envs, dtype=bool)
        self.terminated = np.zeros(self.num_envs, dtype=bool)
        self.truncated = np.zeros(self.num_envs, dtype=bool)
        self.screens: np.ndarray | None = None

    @property
    def num_actions(self) -> int:
        """The size of the game's action set (minimal, or full with ``full_action_space``)."""
        return len(self.ale.get_action_set())

    # ------------------------------------------------------------------ seeding
    def seed(self, seed: int | None) -> None:
        """Seed sub-env ``i`` with ``seed + i`` at the next reset (``None``: ale-py's own
        seeding)."""
        self.pending_seed = None if seed is None else int(seed) % _SEEDS

    # ------------------------------------------------------------------ reset
    def reset(self, rows: np.ndarray | None) -> dict[str, Any]:
        """Reset the sub-envs of ``rows`` (a bool array; ``None``: all) and return the frames of
        every sub-env and their ``terminated`` / ``truncated`` flags (those of the sub-envs not
        reset are kept)."""
        if rows is None or not self.started:
            rows = None
            ids = self.all_ids
        else:
            ids = np.flatnonzero(rows)
        seeds = self._seeds(ids)
        obs, _ = self.ale.reset(ids, seeds)
        if self.twin is not None:
            self.screens = self.twin.reset(ids, seeds)[0]
        self.started = True
        reset = slice(None) if rows is None else rows
        self.ended[reset] = False
        self.terminated[reset] = False
        self.truncated[reset] = False
        return {
            "observation": obs,
            "terminated": self.terminated.copy(),
            "truncated": self.truncated.copy(),
        }

    def _seeds(self, ids: np.ndarray) -> np.ndarray:
        """The seeds of a reset of ``ids``: ``s + i`` once after :meth:`seed`, else -1 (each
        sub-env goes on with its own generator). With a render twin, a first reset that has
        no seed draws one, so that both envs start alike."""
        seed = self.pending_seed
        if seed is None and self.twin is not None and not self.started:
            seed = secrets.randbelow(_SEEDS)
        if seed is None:
            return np.full(len(ids), -1, dtype=np.int64)
        self.pending_seed = None
        return (seed + ids.astype(np.int64)) % _SEEDS

    # ------------------------------------------------------------------ step
    def step(self, action: np.ndarray) -> dict[str, Any]:
        """Step every sub-env with ``action`` (one int32 index per sub-env)."""
        if not self.started:
            raise hub.errors.HubError(f"ale:{self.game}: reset the env before stepping it.")
        if self.ended.any():
            raise hub.errors.HubError(
                f"ale:{self.game}: sub-envs {np.flatnonzero(self.ended).tolist()[:16]} ended "
                "their episode and were not reset; reset them first (env.reset(td) with '_reset' "
                "set for them; step_and_maybe_reset and rollout do it)."
            )
        self.ale.send(action, self.paddle)
        if self.twin is not None:
            self.twin.send(action, self.paddle)
        obs, reward, terminated, truncated, _ = self.ale.recv()
        if self.twin is not None:
            self.screens = self.twin.recv()[0]
        np.copyto(self.terminated, terminated)  # hub keeps ale-py's arrays: copies are kept here
        np.copyto(self.truncated, truncated)
        np.logical_or(terminated, truncated, out=self.ended)
        return {
            "observation": obs,
            "reward": reward,
            "terminated": terminated,
            "truncated": truncated,
        }

    # ------------------------------------------------------------------ rendering
    def frames(self) -> np.ndarray:
        """The current colour screen of every sub-env, ``uint8 [num_envs, 210, 160, 3]``."""
        if self.twin is None:
            raise hub.errors.HubError(
                f"ale:{self.game} was not made to render: make it with render_mode='rgb_array' "
                "(hub.make_env('ale:Pong-v5', num_envs=8, render_mode='rgb_array'))."
            )
        if self.screens is None:
            raise hub.errors.HubError(f"ale:{self.game}: reset the env before rendering it.")
        return self.screens[:, 0]

    def close(self) -> None:
        """Drop the vector envs (ale-py stops their threads when they are freed)."""
        self.vec = self.ale = self.twin = None
        self.screens = None
