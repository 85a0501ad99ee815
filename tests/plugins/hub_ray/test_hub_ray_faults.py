"""RayEnv's faults on a local Ray instance: an actor that raises, an actor killed mid-rollout
(an error, or with max_restarts a new actor and truncated episodes), and close() leaving no
actor behind (checked with ray.util.state), also after a fault."""

from __future__ import annotations

import functools
import os
import signal

import pytest
import torch
from hub_ray import ActorRestartWarning, RayEnv

from hub.envs.builtin import CountingEnv
from hub.errors import ClosedEnvError, WorkerError

from .ray_helpers import ExplodingEnv, alive_actor_pids, start_local_ray


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    yield from start_local_ray()


def _kill_actor_at(step: int, actor: int, how: str = "sigkill"):
    """A rollout callback that kills ``actor`` after ``step`` steps: its process SIGKILLed, or
    through ``ray.kill``."""
    import ray

    count = {"steps": 0}

    def callback(env, td):
        count["steps"] += 1
        if count["steps"] == step:
            if how == "ray.kill":
                ray.kill(env.actors[actor], no_restart=True)
            else:
                os.kill(env.places[actor].pid, signal.SIGKILL)

    return callback


def test_an_actor_that_raises_names_actor_node_cause_and_traceback():
    env = RayEnv(functools.partial(ExplodingEnv, explode_at=3), 4, envs_per_actor=2, timeout=120)
    pids = [place.pid for place in env.places]
    try:
        td = env.reset()
        td["action"] = torch.ones(4, 1, dtype=torch.int64)
        with pytest.raises(WorkerError) as info:
            for _ in range(5):
                td = env.step_mdp(env.step(td))
                td["action"] = torch.ones(4, 1, dtype=torch.int64)
        message = str(info.value)
        assert "Ray actor 0 (envs 0-1, node 127.0.0.1" in message
        assert f"pid {pids[0]}" in message
        assert "raised ValueError during step: boom at count 3" in message
        assert "Traceback from worker 0" in message and "_step" in message  # the remote one
        assert info.value.worker == 0
    finally:
        env.close()
    assert alive_actor_pids(pids) == []  # close after a fault leaves no actor


def test_an_actor_killed_mid_rollout_is_a_clear_error_then_close_cleans_up():
    env = RayEnv(CountingEnv, 4, envs_per_actor=2, timeout=120)
    pids = [place.pid for place in env.places]
    with pytest.raises(WorkerError) as info:
        env.rollout(20, callback=_kill_actor_at(3, 1, "ray.kill"), break_when_any_done=False)
    message = str(info.value)
    assert "Ray actor 1 (envs 2-3, node 127.0.0.1" in message and "died during step" in message
    assert "max_restarts" in message
    env.close()
    env.close()  # twice is fine
    assert alive_actor_pids(pids) == [] and env.actors == []
    with pytest.raises(ClosedEnvError, match="closed"):
        env.reset()
    with pytest.raises(ClosedEnvError, match="closed"):
        env.step_send(env.rand_action())


def test_a_killed_actor_is_created_again_with_max_restarts():
    env = RayEnv(CountingEnv, 4, envs_per_actor=2, max_restarts=1, timeout=120)
    old_pid = env.places[1].pid
    env.set_seed(0)
    try:
        with pytest.warns(ActorRestartWarning, match="Ray actor 1 .* died"):
            data = env.rollout(8, callback=_kill_actor_at(3, 1), break_when_any_done=False)
        assert env.restarts == [0, 1]
        assert env.places[1].pid != old_pid
        step = data[:, 3]  # the step the actor died in: its episodes are cut
        assert step["next", "truncated"].squeeze(-1).tolist() == [False, False, True, True]
        assert step["next", "done"].squeeze(-1).tolist() == [False, False, True, True]
        assert not step["next", "terminated"].any()
        assert step["next", "reward"][2:].eq(0).all()
        assert torch.equal(step["next", "observation"][2:], step["observation"][2:])
        after = data[:, 4]  # the new actor's envs start new episodes
        assert after["observation"][2:].eq(0).all()
        assert after["observation"][:2].gt(0).all() or after["observation"][:2].ge(0).all()
        assert not data[:, 4:]["next", "truncated"].any()
    finally:
        pids = [place.pid for place in env.places]
        env.close()
    assert alive_actor_pids(pids + [old_pid]) == []
