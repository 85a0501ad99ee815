"""``MultiThreadedEnvWrapper.render_frames``: EnvPool's RGB frames, one per env."""

from __future__ import annotations

import numpy as np
import pytest
from packaging.version import Version

import hub
from hub.dispatch import module_version

# EnvPool 0.8 cannot render: its make() takes no render_mode and its render() raises
pytestmark = pytest.mark.skipif(
    Version(str(module_version("envpool"))) < Version("1.0"),
    reason="EnvPool < 1.0 cannot render",
)


def test_render_frames_gives_one_full_size_rgb_frame_per_env():
    env = hub.make_env("envpool:Pong-v5", num_envs=3, seed=0, render_mode="rgb_array")
    try:
        env.reset()
        frames = env.render_frames()
        assert frames.shape == (3, 210, 160, 3) and frames.dtype == np.uint8
        assert env.render_frames(env_ids=[2]).shape == (1, 210, 160, 3)
    finally:
        env.close()


def test_render_frames_of_an_unbatched_env_is_one_frame():
    """Batch dims first, as ``EnvBase.render_frames`` says: none for an env of batch size []."""
    env = hub.make_env("envpool:Pong-v5", seed=0, render_mode="rgb_array")
    try:
        env.reset()
        assert env.batch_size == ()
        assert env.render_frames().shape == (210, 160, 3)
        assert env.render_frames(env_ids=[0]).shape == (1, 210, 160, 3)
    finally:
        env.close()


def test_render_frames_without_render_mode_says_what_to_pass():
    env = hub.make_env("envpool:Pong-v5", num_envs=2, seed=0)
    try:
        env.reset()
        with pytest.raises(hub.errors.NoFramesError, match='render_mode="rgb_array"'):
            env.render_frames()
    finally:
        env.close()


def test_the_envpool_env_has_one_render_method():
    """``render_frames`` is hub's; ``render`` is not redefined (a wrapper forwards it to the
    pool, as it does for gym envs)."""
    from hub_envpool import MultiThreadedEnvWrapper

    assert "render" not in vars(MultiThreadedEnvWrapper)
    assert "render_frames" in vars(MultiThreadedEnvWrapper)
