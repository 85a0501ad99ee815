"""A gymnasium env with a ``Text`` observation, registered as ``HubTestText-v0`` when this
module is imported: ``ParallelEnv`` workers started with spawn or forkserver import it (through
:func:`make_text`, which they unpickle), so they know the id too."""

from __future__ import annotations

import gymnasium
import numpy as np

import hub

ENV_ID = "HubTestText-v0"


class TextEnv(gymnasium.Env):
    """A ``Text`` mission beside a ``Box``; episodes of 2 to 4 steps, drawn at reset."""

    def __init__(self) -> None:
        self.observation_space = gymnasium.spaces.Dict(
            {
                "pos": gymnasium.spaces.Box(0, 10, (1,), np.float32),
                "mission": gymnasium.spaces.Text(20, charset="go !0123456789"),
            }
        )
        self.action_space = gymnasium.spaces.Discrete(2)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self.t = 0
        self.word = f"go {int(self.np_random.integers(100))}"
        self.length = 2 + int(self.np_random.integers(3))
        return {"pos": np.zeros(1, np.float32), "mission": self.word}, {}

    def step(self, action):
        self.t += 1
        obs = {"pos": np.array([self.t], np.float32), "mission": self.word + "!" * self.t}
        return obs, 1.0, self.t >= self.length, False, {}


if ENV_ID not in gymnasium.envs.registration.registry:
    gymnasium.register(ENV_ID, entry_point=TextEnv)


def make_text() -> hub.EnvBase:
    """One hub env over ``HubTestText-v0`` (a picklable factory for ``ParallelEnv``)."""
    return hub.make_env(f"gymnasium:{ENV_ID}")
