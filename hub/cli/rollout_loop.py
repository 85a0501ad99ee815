"""The loop behind ``hub rollout``: random actions, auto-reset, episode accounting, frames.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting")  # doctest: +SKIP
    >>> run_rollout(env, steps=10).env_steps  # doctest: +SKIP
    10
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from hub.cli.episodes import EpisodeTracker, StepReader
from hub.cli.recording import TiledRecording

# how often (seconds) the progress callback is called: often enough for a live bar, rarely
# enough that the bar does not slow a fast env down
PROGRESS_INTERVAL = 0.05


@dataclass
class RolloutResult:
    """What a rollout did: steps run, time spent, and the finished episodes.

    Example:
        >>> r = RolloutResult(num_envs=2, steps=10, seconds=0.5, tracker=EpisodeTracker(2))
        >>> r.env_steps, r.steps_per_s
        (20, 40.0)
    """

    num_envs: int
    steps: int
    seconds: float
    tracker: EpisodeTracker
    interrupted: bool = False
    frames: Sequence[np.ndarray] = field(default_factory=list)

    @property
    def env_steps(self) -> int:
        """Steps summed over all envs: batch steps times the number of envs."""
        return self.steps * self.num_envs

    @property
    def steps_per_s(self) -> float | None:
        """Env-steps per second (``None`` when no time was measured)."""
        return self.env_steps / self.seconds if self.seconds > 0 else None


def run_rollout(
    env: Any,
    steps: int,
    *,
    recording: TiledRecording | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> RolloutResult:
    """Reset ``env``, then run ``steps`` batch steps with random actions.

    Each step is ``data, td = env.step_and_maybe_reset(env.rand_action(td))``: ``data`` holds the
    transition (its ``"next"`` entry has the reward and done flags), ``td`` the data to act on
    next, reset where an episode ended. Ctrl-C stops the loop early; the result then has
    ``interrupted=True`` and counts the steps that ran.

    Args:
        env: a hub env (any batch size).
        steps: the number of batch steps.
        recording: where the envs' frames of the reset and of the steps go, if recording
            (it keeps one step in ``recording.every``).
        on_progress: called as ``on_progress(steps_done, episodes)`` every
            :data:`PROGRESS_INTERVAL` seconds and at the end.
    """
    num_envs = math.prod(env.batch_size)
    reader = StepReader(env.reward_keys, env.done_keys, env.batch_size)
    tracker = EpisodeTracker(num_envs)
    td = env.reset()
    if recording is not None:
        recording.add(0, td, tracker.running_returns)
    done_steps = 0
    interrupted = False
    start = last_report = time.perf_counter()
    try:
        with torch.no_grad():
            for done_steps in range(1, steps + 1):  # noqa: B007 - read after the loop
                data, td = env.step_and_maybe_reset(env.rand_action(td))
                tracker.update(*reader(data))
                if recording is not None:
                    recording.add(done_steps, data.get("next"), tracker.running_returns)
                if on_progress is not None:
                    now = time.perf_counter()
                    if now - last_report >= PROGRESS_INTERVAL:
                        on_progress(done_steps, tracker.episodes)
                        last_report = now
    except KeyboardInterrupt:
        interrupted = True
        done_steps = max(done_steps - 1, 0)  # the step under way did not finish
    seconds = time.perf_counter() - start
    if on_progress is not None:
        on_progress(done_steps, tracker.episodes)
    frames = recording if recording is not None else []
    return RolloutResult(num_envs, done_steps, seconds, tracker, interrupted, frames)
