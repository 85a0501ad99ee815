"""Export hub envs to other APIs: :func:`to_gymnasium`.

Imports gymnasium only when called, so ``import hub.export`` works on a bare install.

Example:
    >>> import hub
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Pendulum"), observation_keys=["observation"])
    >>> genv.observation_space.shape
    (3,)
"""

from hub.export.gymnasium_env import to_gymnasium

__all__ = ["to_gymnasium"]
