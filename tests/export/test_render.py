"""Rendering through every export for every backend that renders; ``render_mode`` given to
``make_env``, to the export, or to both, means the same thing."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import hub

gymnasium = pytest.importorskip("gymnasium")

needs_envpool = pytest.mark.skipif(
    importlib.util.find_spec("envpool") is None, reason="EnvPool is not installed"
)
needs_dm_control = pytest.mark.skipif(
    importlib.util.find_spec("dm_control") is None, reason="dm_control is not installed"
)
needs_sb3 = pytest.mark.skipif(
    importlib.util.find_spec("stable_baselines3") is None, reason="stable-baselines3 missing"
)

WHERE = ["make_env", "export", "both"]


def _made(uri, where, **kwargs):
    env_kwargs = {"render_mode": "rgb_array"} if where in ("make_env", "both") else {}
    export_mode = "rgb_array" if where in ("export", "both") else None
    return hub.make_env(uri, **kwargs, **env_kwargs), export_mode


def _is_frame(frame, shape=None) -> None:
    frame = np.asarray(frame)
    assert frame.dtype == np.uint8 and frame.ndim == 3 and frame.shape[-1] == 3
    assert frame.std() > 0  # a picture, not a blank
    if shape is not None:
        assert frame.shape == shape


@pytest.mark.parametrize("where", WHERE)
def test_gymnasium_single(where: str) -> None:
    env, mode = _made("gymnasium:CartPole-v1", where)
    genv = hub.to_gymnasium(env, render_mode=mode)
    assert genv.render_mode == "rgb_array"
    genv.reset(seed=0)
    _is_frame(genv.render(), (400, 600, 3))


@pytest.mark.parametrize("where", WHERE)
def test_gymnasium_vector(where: str) -> None:
    env, mode = _made("gymnasium:CartPole-v1", where, num_envs=2)
    genv = hub.to_gymnasium(env, render_mode=mode)
    genv.reset(seed=0)
    frames = genv.render()
    assert isinstance(frames, tuple) and len(frames) == 2
    for frame in frames:
        _is_frame(frame, (400, 600, 3))


@needs_envpool
@pytest.mark.parametrize("where", WHERE)
def test_envpool(where: str) -> None:
    env, mode = _made("envpool:CartPole-v1", where, num_envs=2)
    genv = hub.to_gymnasium(env, render_mode=mode)
    genv.reset(seed=0)
    frames = genv.render()
    assert len(frames) == 2
    for frame in frames:
        _is_frame(frame, (400, 600, 3))
    genv.close()


@needs_dm_control
@pytest.mark.parametrize("where", WHERE)
def test_dm_control(where: str) -> None:
    env, mode = _made("dm_control:cartpole/balance", where, height=48, width=64)
    genv = hub.to_gymnasium(env, render_mode=mode)
    genv.reset(seed=0)
    _is_frame(genv.render(), (48, 64, 3))


@pytest.mark.parametrize("where", WHERE)
def test_hub_pendulum_single_and_batched(where: str) -> None:
    env, mode = _made("hub:Pendulum", where)
    genv = hub.to_gymnasium(env, render_mode=mode)
    genv.reset(seed=0)
    _is_frame(genv.render(), (64, 64, 3))
    env, mode = _made("hub:Pendulum", where, num_envs=2)
    venv = hub.to_gymnasium(env, render_mode=mode)
    venv.reset(seed=0)
    frames = venv.render()
    assert len(frames) == 2 and not np.array_equal(frames[0], frames[1])
    # in a SerialEnv, stateless sub-envs have no data to draw: a clear error (env-contract.md)
    serial = hub.to_gymnasium(
        hub.make_env("hub:Pendulum", num_envs=2, batching="serial"), render_mode="rgb_array"
    )
    serial.reset(seed=0)
    with pytest.raises(hub.errors.NoFramesError, match="stateless"):
        serial.render()


def test_every_builtin_takes_render_mode() -> None:
    env = hub.make_env("hub:Pendulum", render_mode="rgb_array")
    assert env.render_mode == "rgb_array"
    _is_frame(env.render_frames(env.reset()), (64, 64, 3))
    assert hub.make_env("hub:Counting", render_mode=None).batch_size == ()
    with pytest.raises(hub.errors.HubError, match="does not render"):
        hub.make_env("hub:Counting", render_mode="rgb_array")
    with pytest.raises(ValueError, match="rgb_array"):
        hub.make_env("hub:Pendulum", render_mode="human")


def test_a_transformed_env_renders_its_base_env() -> None:
    from hub.transforms import StepCounter

    env = hub.make_env("gymnasium:CartPole-v1", render_mode="rgb_array", transforms=[StepCounter()])
    genv = hub.to_gymnasium(env)
    genv.reset(seed=0)
    _is_frame(genv.render(), (400, 600, 3))


@needs_dm_control
def test_the_dm_control_cat_tensors_recipe_renders() -> None:
    from hub.transforms import CatTensors

    env = hub.make_env(
        "dm_control:cartpole/balance",
        height=48,
        width=64,
        transforms=[CatTensors(in_keys=["position", "velocity"], out_key="observation")],
    )
    genv = hub.to_gymnasium(env, render_mode="rgb_array")
    assert genv.observation_space.shape == (5,)
    genv.reset(seed=0)
    genv.step(genv.action_space.sample())
    _is_frame(genv.render(), (48, 64, 3))


@needs_envpool
def test_single_envpool_export_gives_one_frame() -> None:
    genv = hub.to_gymnasium(hub.make_env("envpool:CartPole-v1"), render_mode="rgb_array")
    genv.reset(seed=0)
    _is_frame(genv.render(), (400, 600, 3))
    genv.close()


def test_batched_gymnasium_envs_in_workers() -> None:
    env = hub.make_env("gymnasium:CartPole-v1", num_envs=2, batching="serial")
    venv = hub.to_gymnasium(env, render_mode="rgb_array")
    venv.reset(seed=0)
    for frame in venv.render():
        _is_frame(frame, (400, 600, 3))


def test_no_mode_renders_nothing_and_unknown_modes_are_refused() -> None:
    genv = hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1"))
    genv.reset(seed=0)
    assert genv.render() is None
    with pytest.raises(hub.errors.HubError, match="rgb_array"):
        hub.to_gymnasium(hub.make_env("gymnasium:CartPole-v1"), render_mode="human")


def test_an_env_that_cannot_render_says_so() -> None:
    with pytest.raises(hub.errors.HubError, match="cannot render"):
        hub.to_gymnasium(hub.make_env("hub:Counting"), render_mode="rgb_array")


@needs_envpool
def test_a_wrapped_envpool_pool_keeps_its_mode() -> None:
    import envpool
    from hub_envpool import MultiThreadedEnvWrapper

    pool = envpool.make("CartPole-v1", env_type="gymnasium", num_envs=2)
    with pytest.raises(hub.errors.HubError, match="render_mode"):
        hub.to_gymnasium(MultiThreadedEnvWrapper(pool), render_mode="rgb_array")


@needs_sb3
def test_sb3_get_images() -> None:
    venv = hub.to_sb3(hub.make_env("gymnasium:CartPole-v1", num_envs=2), render_mode="rgb_array")
    venv.reset()
    images = venv.get_images()
    assert len(images) == 2
    for image in images:
        _is_frame(image, (400, 600, 3))
    single = hub.to_sb3(hub.make_env("hub:Pendulum"), render_mode="rgb_array")
    single.reset()
    _is_frame(single.get_images()[0], (64, 64, 3))


def test_a_transformed_env_renders_through_its_base_env() -> None:
    from hub.transforms import StepCounter

    env = hub.make_env("hub:Pendulum", transforms=[StepCounter(5)])
    genv = hub.to_gymnasium(env, render_mode="rgb_array")
    genv.reset(seed=0)
    _is_frame(genv.render(), (64, 64, 3))
    counting = hub.make_env("hub:Counting", transforms=[StepCounter(5)])
    with pytest.raises(hub.errors.HubError, match="CountingEnv cannot render"):
        hub.to_gymnasium(counting, render_mode="rgb_array")
