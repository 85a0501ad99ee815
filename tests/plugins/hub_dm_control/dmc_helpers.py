"""Shared helpers of the hub_dm_control tests."""

from __future__ import annotations

import os

import pytest
import torch

import hub
from hub.dispatch import is_installed

HAS_DMC = is_installed("dm_control") and is_installed("mujoco")
needs_dmc = pytest.mark.skipif(not HAS_DMC, reason="dm_control and mujoco are not installed")
needs_gl = pytest.mark.skipif(
    os.environ.get("MUJOCO_GL") not in ("egl", "osmesa", "glfw"),
    reason="pixels need MUJOCO_GL=egl (or osmesa / glfw) set before dm_control is imported",
)

#: the acceptance tasks of issue 8
ACCEPTANCE_TASKS = ("cheetah/run", "cartpole/swingup", "walker/walk", "humanoid/stand")


def make(task: str, **kwargs):
    return hub.make_env(f"dm_control:{task}", **kwargs)


def seeded_rollout(task: str, seed: int, steps: int, **kwargs):
    """A rollout with random actions, env and torch both seeded with ``seed``."""
    env = make(task, seed=seed, **kwargs)
    torch.manual_seed(seed)
    try:
        return env.rollout(steps, break_when_any_done=False)
    finally:
        env.close()
