"""Choosing the backend: set_gym_backend both ways in one process, dispatch resolved once."""

from __future__ import annotations

import threading

import pytest
from hub_gym.compat import resolve_compat

import hub
from tests.plugins.hub_gym.gym_helpers import BACKENDS, NO_BACKEND, backend_params, version

BOTH = pytest.mark.skipif(
    len(BACKENDS) < 2,
    reason="needs gym and gymnasium installed together (tox -e both); installed: "
    + (", ".join(BACKENDS) or "neither"),
)


@pytest.mark.parametrize("backend", backend_params())
def test_compat_follows_the_backend(backend: str) -> None:
    compat = resolve_compat(backend)
    assert compat.backend == backend
    assert compat.version == str(version(backend))
    assert compat.module.__name__ == backend


@BOTH
def test_set_gym_backend_both_ways_in_one_process() -> None:
    from hub_gym import GymEnv

    envs = {}
    for name in ("gym", "gymnasium", "gym"):
        with hub.set_gym_backend(name):
            assert hub.gym_backend().__name__ == name
            envs[name] = GymEnv("Pendulum-v1")
    assert envs["gym"].backend == "gym" and envs["gymnasium"].backend == "gymnasium"
    assert type(envs["gym"].unwrapped).__module__.startswith("gym.")
    assert type(envs["gymnasium"].unwrapped).__module__.startswith("gymnasium.")
    for env in envs.values():  # stepped outside the block: each keeps its own backend
        hub.check_env_specs(env)


@BOTH
def test_namespaces_pick_their_backend_whatever_is_active() -> None:
    with hub.set_gym_backend("gymnasium"):
        env = hub.make_env("gym:CartPole-v1", num_envs=2)
    assert env.backend == "gym"
    hub.check_env_specs(env)


@BOTH
def test_backend_choice_is_per_thread() -> None:
    seen = {}

    def worker() -> None:
        seen["thread"] = hub.gym_backend().__name__

    with hub.set_gym_backend("gym"):
        thread = threading.Thread(target=worker)
        thread.start()
        thread.join()
        seen["main"] = hub.gym_backend().__name__
    assert seen == {"thread": "gymnasium", "main": "gym"}


@pytest.mark.skipif(not BACKENDS, reason=NO_BACKEND)
def test_dispatch_runs_the_active_backends_implementation() -> None:
    from hub_gym.compat.step import step_output

    with hub.set_gym_backend(BACKENDS[0]):
        chosen = step_output.resolve()
        assert BACKENDS[0] in step_output.explain()
    modules = [impl.module for impl in step_output.implementations if impl.function is chosen]
    assert modules == [BACKENDS[0]]
