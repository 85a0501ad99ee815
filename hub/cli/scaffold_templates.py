"""The files ``hub new-plugin NAME`` writes, as ``string.Template`` texts (``$name`` fields).

Fields: ``name`` (the entry-point name and namespace), ``dist`` (``hub-plugin-<name>``),
``package`` (``hub_plugin_<name>``), ``class_name`` (the env class), ``env_id`` (its id).

Example:
    >>> from string import Template
    >>> sorted(TEMPLATES)[:2]
    ['README.md', 'pyproject.toml']
"""

from __future__ import annotations

PYPROJECT = """\
[build-system]
requires = ["setuptools>=69"]
build-backend = "setuptools.build_meta"

[project]
name = "$dist"
version = "0.1.0"
description = "A hub plugin: the '$name' namespace."
readme = "README.md"
requires-python = ">=3.10"
# Add your simulator here (or in an extra, named in the Namespace's requires=).
dependencies = ["hub"]

[project.optional-dependencies]
test = ["pytest>=8"]

# The line that makes it a plugin: hub loads this module (lazily, when plugins are first needed).
[project.entry-points."hub.plugins"]
$name = "$package.plugin"

[tool.setuptools.packages.find]
where = ["src"]

[tool.ruff]
line-length = 100
"""

README = """\
# $dist

A [hub](https://github.com/) plugin: the namespace **`$name`**, with one env, **`$name:$env_id`**.

```console
$$ pip install -e ".[test]"
$$ hub plugins                      # lists '$name' and its version
$$ hub rollout $name:$env_id --steps 100
$$ pytest                           # hub's conformance kit, then your own tests
```

## Layout

```
$dist/
  pyproject.toml             the distribution and its entry point (group "hub.plugins")
  src/$package/
    __init__.py              the version; imports nothing
    plugin.py                the hook implementations hub loads: imports no simulator
    envs.py                  the env (imported only when an env is built)
  tests/test_$package.py     hub's conformance kit over every env, and the env's own tests
```

## Next steps

1. Replace the walk in `envs.py` with your simulator: build it in `__init__`, convert its
   spaces into specs (`hub.convert_spec` knows gymnasium's and dm_env's), write `_reset`,
   `_step`, `_set_seed` and `_close`. Or derive from `hub.GymLikeEnv` when your simulator
   has a gym-like `reset`/`step`.
2. List your ids in `plugin.py` (`ENV_IDS`, or a `list_envs` that asks the simulator).
3. Run `pytest`: the `hub_conformance` marker checks strict loading, the lazy-import rule,
   specs, seeding, serial and parallel batching, partial resets, `close` and pickling for
   every env your namespace lists.

The guide is hub's `docs/plugins.md`.
"""

INIT = '''\
"""$dist: the '$name' namespace for hub. Importing this package imports nothing heavy."""

__version__ = "0.1.0"
'''

PLUGIN = '''\
"""The plugin module: the entry point ``$name = "$package.plugin"`` names it.

hub imports this module the first time it needs its plugins, so it imports no simulator: the
env module is imported inside ``make``.
"""

from __future__ import annotations

from typing import Any

import hub

ENV_IDS = ("$env_id",)


def make(env_id: str, **kwargs: Any) -> hub.EnvBase:
    """Build the env ``env_id`` (hub has checked that ``list_envs`` lists it)."""
    from $package.envs import $class_name

    return $class_name(**kwargs)


def list_envs() -> list[str]:
    """The ids of the '$name' namespace."""
    return list(ENV_IDS)


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The '$name' namespace."""
    return [
        hub.Namespace("$name", make=make, list_envs=list_envs, description="a $dist env")
    ]
'''

ENVS = '''\
"""The env of the '$name' namespace: ``$name:$env_id``; replace the walk with your simulator.

Example:
    >>> env = $class_name(size=3)
    >>> env.set_seed(0) is not None
    True
    >>> env.rollout(5).batch_size[0] <= 5
    True
"""

from __future__ import annotations

from typing import Any

import hub
import torch
from hub.specs import Bounded, Categorical, Composite, Unbounded


class $class_name(hub.EnvBase):
    """Walk on a line from a random start to 0: action 0 steps left, 1 stays, 2 steps right.

    The episode terminates at 0 (reward 1) and is truncated after ``max_steps`` steps; every
    step costs 0.01.

    Args:
        size: starts are drawn in ``[-size, size]`` without 0; the walk stays in that range.
        max_steps: the truncation limit.
        **kwargs: the other ``hub.EnvBase`` arguments (``device``, ``checks``...).
    """

    def __init__(self, size: int = 5, max_steps: int = 50, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.size = size
        self.max_steps = max_steps
        flag = Categorical(2, shape=(1,), dtype=torch.bool)
        self.observation_spec = Composite(
            position=Bounded(-size, size, shape=(1,), dtype=torch.int64)
        )
        self.action_spec = Categorical(3, shape=(1,))
        self.reward_spec = Unbounded((1,))
        self.done_spec = Composite(done=flag, terminated=flag.clone(), truncated=flag.clone())
        self.generator = torch.Generator()
        self.position = torch.zeros(1, dtype=torch.int64)
        self.steps = 0

    # hub calls these two hooks with plain arrays (numpy on the CPU) and turns what they
    # return into its tensordicts: checks, done flags and resets of ended episodes are hub's
    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict:
        start = torch.randint(1, self.size + 1, (1,), generator=self.generator)
        sign = torch.randint(0, 2, (1,), generator=self.generator) * 2 - 1
        self.position = start * sign
        self.steps = 0
        return {"position": self.position.clone()}

    def _step_arrays(self, inputs: dict, rows: Any = None) -> dict:
        move = int(inputs["action"][0]) - 1
        self.position = (self.position + move).clamp(-self.size, self.size)
        self.steps += 1
        terminated = bool(self.position[0] == 0)
        return {
            "position": self.position.clone(),
            "reward": float(terminated) - 0.01,
            "terminated": terminated,
            "truncated": self.steps >= self.max_steps and not terminated,
        }

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            self.generator.seed()
        else:
            self.generator.manual_seed(seed)

    def _close(self) -> None:
        """Release the simulator's resources (nothing to release here)."""
'''

TESTS = '''\
"""Tests of $dist, against the installed distribution (``pip install -e ".[test]"``).

``test_conformance`` runs hub's conformance kit (``hub.testing``, a pytest plugin that
comes with hub): one test per check, over every env the '$name' namespace lists.
"""

from __future__ import annotations

import hub
import pytest
import torch


@pytest.mark.hub_conformance("$name")
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()


def test_walking_to_zero_ends_the_episode():
    env = hub.make_env("$name:$env_id", size=2, seed=0)

    def toward_zero(td):
        return td.set("action", torch.where(td["position"] > 0, 0, 2))

    data = env.rollout(10, policy=toward_zero)
    assert data["next", "terminated"][-1].item()
    assert data["next", "reward"][-1].item() == pytest.approx(0.99)
'''

TEMPLATES = {
    "pyproject.toml": PYPROJECT,
    "README.md": README,
    "src/$package/__init__.py": INIT,
    "src/$package/plugin.py": PLUGIN,
    "src/$package/envs.py": ENVS,
    "tests/test_$package.py": TESTS,
}
