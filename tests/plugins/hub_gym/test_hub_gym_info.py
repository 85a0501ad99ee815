"""Info-dict readers: chosen info entries, with specs, in reset and step outputs."""

from __future__ import annotations

import importlib

import numpy as np
import pytest
import torch
from hub_gym import GymWrapper, InfoDictReader

import hub
from tests.plugins.hub_gym.gym_helpers import backend_params, raw_make_kwargs


def _env_with_info(backend: str, vector: bool = False):
    module = importlib.import_module(backend)

    class Counter(module.Wrapper):
        def step(self, action):
            out = list(self.env.step(action))
            self.count = getattr(self, "count", 0) + 1
            out[-1] = dict(out[-1], count=self.count, tag="x")
            return tuple(out)

    kwargs = raw_make_kwargs(backend)
    if not vector:
        return Counter(module.make("Pendulum-v1", **kwargs))
    fns = [lambda: Counter(module.make("Pendulum-v1", **kwargs))] * 2
    return module.vector.SyncVectorEnv(fns)


@pytest.mark.parametrize("backend", backend_params())
def test_info_reader_with_a_spec(backend: str) -> None:
    env = GymWrapper(_env_with_info(backend))
    spec = {"count": hub.specs.Unbounded((1,), dtype=torch.int64)}
    env = env.set_info_dict_reader(InfoDictReader(["count"], spec=spec))
    assert env.observation_spec["count"].dtype == torch.int64
    data = env.rollout(3)
    assert data["next", "count"].squeeze(-1).tolist() == [1, 2, 3]
    assert data["count"][0].item() == 0  # a reset has no such entry: zeros
    hub.check_env_specs(env)


@pytest.mark.parametrize("backend", backend_params())
def test_info_reader_infers_specs(backend: str) -> None:
    env = GymWrapper(_env_with_info(backend))
    env.set_info_dict_reader(InfoDictReader(["count", "tag"]))
    assert env.observation_spec["count"].shape == (1,)
    assert isinstance(env.observation_spec["tag"], hub.specs.NonTensor)
    data = env.rollout(2)
    assert data["next", "count"].shape == (2, 1)


@pytest.mark.parametrize("backend", backend_params())
def test_info_reader_unknown_key(backend: str) -> None:
    env = GymWrapper(_env_with_info(backend))
    with pytest.raises(hub.errors.HubError, match="no entry 'nope'"):
        env.set_info_dict_reader(InfoDictReader(["nope"]))


@pytest.mark.parametrize("backend", backend_params())
def test_info_reader_in_a_vector_env(backend: str) -> None:
    env = GymWrapper(_env_with_info(backend, vector=True))
    spec = {"count": hub.specs.Unbounded((1,), dtype=torch.int64)}
    env.set_info_dict_reader(InfoDictReader(["count"], spec=spec))
    data = env.rollout(2)
    assert data["next", "count"].shape == (2, 2, 1)
    assert np.all(data["next", "count"][:, -1].numpy() >= 1)
