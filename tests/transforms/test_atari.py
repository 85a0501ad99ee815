"""The documented Atari pipeline gives EnvPool's observation shape from gymnasium's ALE frames.

Runs when the gymnasium plugin and ale-py (for ``gymnasium:ALE/Pong-v5``) and the envpool
plugin (for ``envpool:Pong-v5``) are installed; each missing piece skips with its reason.
"""

from __future__ import annotations

import importlib.util

import pytest
import torch

import hub
from hub.errors import HubError
from hub.transforms import TransformedEnv
from hub.transforms.atari import atari_preprocessing


def image_key(env) -> str:
    """The uint8 image observation of an env (its only uint8 entry with 3 or more dims)."""
    nb = len(env.batch_size)
    keys = [
        key
        for key, spec in env.observation_spec.items(include_nested=True, leaves_only=True)
        if spec.dtype == torch.uint8 and spec.ndim - nb >= 3
    ]
    assert len(keys) == 1, f"expected one image observation, got {keys}"
    return keys[0]


def make_or_skip(uri: str, **kwargs):
    try:
        return hub.make_env(uri, **kwargs)
    except (HubError, ImportError) as err:
        pytest.skip(f"{uri} is not available here: {err}")


@pytest.fixture(scope="module")
def gym_pong():
    if importlib.util.find_spec("ale_py") is None:
        pytest.skip("ale-py is not installed (pip install ale-py): no gymnasium ALE envs")
    import ale_py
    import gymnasium

    gymnasium.register_envs(ale_py)
    env = make_or_skip("gymnasium:ALE/Pong-v5")
    yield env
    env.close()


def test_atari_pipeline_on_gymnasium_pong(gym_pong):
    key = image_key(gym_pong)
    assert gym_pong.observation_spec[key].shape[-3:] == (210, 160, 3)
    env = TransformedEnv(gym_pong, atari_preprocessing(pixels_key=key, noops=3))
    spec = env.observation_spec[key]
    assert spec.shape == (4, 84, 84) and spec.dtype == torch.uint8
    data = env.rollout(3)
    assert data["next", key].shape == (3, 4, 84, 84)
    assert data["next", key].dtype == torch.uint8


def test_atari_pipeline_matches_envpool_shapes(gym_pong):
    pool = make_or_skip("envpool:Pong-v5", num_envs=2)
    try:
        pool_key = image_key(pool)
        pool_spec = pool.observation_spec[pool_key]
        key = image_key(gym_pong)
        env = TransformedEnv(gym_pong, atari_preprocessing(pixels_key=key, noops=3))
        ours = env.observation_spec[key]
        assert ours.shape == pool_spec.shape[1:] == (4, 84, 84)
        assert ours.dtype == pool_spec.dtype == torch.uint8
        assert env.reset()[key].shape == pool.reset()[pool_key].shape[1:]
    finally:
        pool.close()
