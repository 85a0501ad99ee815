"""Specs from EnvPool's spaces, EnvPool's output layout, action writers, version dispatch."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from hub_envpool import compat, specs
from hub_envpool.actions import make_action_writer
from hub_envpool.env import MultiThreadedEnv

import hub
from hub.specs import Bounded, Categorical, Composite, OneHot, Unbounded


@pytest.mark.parametrize(
    ("task", "key", "shape", "dtype"),
    [
        ("Pong-v5", "observation", (3, 4, 84, 84), torch.uint8),
        ("CartPole-v1", "observation", (3, 4), torch.float32),
        ("HalfCheetah-v4", "observation", (3, 17), torch.float64),
        ("CheetahRun-v1", "velocity", (3, 9), torch.float64),
    ],
)
def test_observation_specs_from_envpool_spaces(task, key, shape, dtype):
    env = MultiThreadedEnv(3, task)  # specs only: the pool is built at the first reset
    spec = env.observation_spec[key]
    assert spec.shape == shape and spec.dtype == dtype
    assert env.reward_spec.shape == (3, 1)
    assert sorted(env.done_keys) == ["done", "terminated", "truncated"]


def test_action_specs():
    assert isinstance(MultiThreadedEnv(2, "Pong-v5").action_spec, OneHot)
    spec = MultiThreadedEnv(2, "Pong-v5", categorical_action_encoding=True).action_spec
    assert isinstance(spec, Categorical) and spec.n == 6 and spec.shape == (2,)
    box = MultiThreadedEnv(2, "HalfCheetah-v4").action_spec
    assert isinstance(box, Bounded) and box.shape == (2, 6) and box.dtype == torch.float64


def test_state_layout_reads_envpool_keys():
    keys = [
        "info:env_id",
        "info:players.env_id",
        "elapsed_step",
        "done",
        "reward",
        "trunc",
        "obs:pos",
        "obs:arm.angle",
    ]
    layout = specs.state_layout(keys, dict_obs=True)
    assert layout.observations == (("pos", 6), (("arm", "angle"), 7))
    assert (layout.env_id, layout.done, layout.reward, layout.trunc) == (0, 3, 4, 5)
    with pytest.raises(hub.errors.HubError, match="envpool"):
        specs.state_layout(["obs", "done"], dict_obs=False)


def test_clean_space_reads_envpool_no_bound_markers_as_infinite():
    import gymnasium

    tiny, big = np.finfo(np.float64).tiny, np.finfo(np.float64).max
    space = gymnasium.spaces.Dict({"a": gymnasium.spaces.Box(tiny, big, (2,), np.float64)})
    assert isinstance(specs.observation_spec(space, (), None)["a"], Unbounded)
    real = gymnasium.spaces.Box(-1.0, 1.0, (2,), np.float32)
    assert specs.clean_space(real) is real


def test_action_writer_gives_envpool_exact_arrays():
    import gymnasium

    write = make_action_writer(
        OneHot(4, shape=(2, 4)),
        gymnasium.spaces.Discrete(4, start=1),
        np.dtype(np.int32),
        (),
        rows=2,
    )
    out = write(torch.tensor([[0, 0, 1, 0], [1, 0, 0, 0]], dtype=torch.bool))
    assert out.dtype == np.int32 and out.tolist() == [3, 1]  # start added back
    box = make_action_writer(
        Bounded(-1.0, 1.0, shape=(6,)),
        gymnasium.spaces.Box(-1, 1, (6,)),
        np.dtype(np.float64),
        (6,),
        rows=1,
        unbatched=True,
    )
    assert box(torch.zeros(6)).shape == (1, 6)


def test_version_dispatch_names_the_ranges():
    assert [i.range for i in compat.env_type_for.implementations] == [">=0.8,<1.1", ">=1.1"]
    assert [i.range for i in compat.check_runtime.implementations] == [">=0.8,<1.0", ">=1.0"]
    compat.check_runtime()  # the installed pair works
    assert compat.env_type_for("gym") in ("gym", "gymnasium")


def test_observation_spec_composite_keeps_batch():
    import gymnasium

    spec = specs.observation_spec(gymnasium.spaces.Discrete(3), (5,), None)
    assert isinstance(spec, Composite) and spec.shape == (5,)
