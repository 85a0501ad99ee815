"""The pure-torch envs of the ``hub:`` namespace: no backend library needed.

``BUILTIN_ENVS`` maps each id to its class; the built-in plugin serves them as ``hub:<id>``.

Example:
    >>> sorted(BUILTIN_ENVS)
    ['Counting', 'MultiAgentCounting', 'Pendulum']
"""

from hub.envs.builtin.counting import CountingEnv
from hub.envs.builtin.multi_agent import MultiAgentCountingEnv
from hub.envs.builtin.pendulum import PendulumEnv

__all__ = ["BUILTIN_ENVS", "CountingEnv", "MultiAgentCountingEnv", "PendulumEnv"]

BUILTIN_ENVS = {
    "Pendulum": PendulumEnv,
    "Counting": CountingEnv,
    "MultiAgentCounting": MultiAgentCountingEnv,
}
