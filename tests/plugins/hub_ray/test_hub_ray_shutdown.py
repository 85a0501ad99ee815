"""A RayEnv whose Ray instance was shut down: the next call is a clear hub error at once, Ray is
not started again behind the user's back, and ``close()`` still works. (Before, the next step
started a new local Ray, about 8 s, then raised Ray's bare ``Exception: Failed to submit task
to actor``.)"""

from __future__ import annotations

import pytest
from hub_ray import RayEnv
from hub_ray.connect import RayShutdownError

import hub
from hub.envs.builtin import CountingEnv

from .ray_helpers import start_local_ray


def test_calls_after_ray_shutdown_raise_and_start_no_ray():
    import ray

    instance = start_local_ray()
    next(instance)
    env = RayEnv(CountingEnv, 2, envs_per_actor=1)
    td = env.rand_action(env.reset())
    ray.shutdown()
    for call in (env.rand_step, env.reset, lambda: env.get_attr("max_steps")):
        with pytest.raises(RayShutdownError, match=r"ray\.shutdown\(\)") as info:
            call()
        assert isinstance(info.value, hub.errors.HubError)
        assert not ray.is_initialized()  # no new instance was started for it
    with pytest.raises(RayShutdownError):
        env.step_and_maybe_reset(td)  # its lean path sends without _ready
    env.close()  # its actors went with Ray: nothing to do, no error
    assert env.is_closed and not ray.is_initialized()
    instance.close()


def test_calls_after_ray_was_started_again_raise_too():

    first = start_local_ray()
    next(first)
    env = RayEnv(CountingEnv, 2, envs_per_actor=1)
    env.reset()
    first.close()  # ray.shutdown()
    second = start_local_ray()
    next(second)  # a new instance, where the env's actors never lived
    try:
        with pytest.raises(RayShutdownError, match=r"started again \(ray\.init\(\)\)"):
            env.rand_step()
        env.close()
        assert env.is_closed
    finally:
        second.close()
