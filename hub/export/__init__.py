"""Export hub envs to other APIs: :func:`to_gymnasium` (gymnasium's ``Env`` and 1.x vector API),
:func:`to_sb3` (a Stable-Baselines3 ``VecEnv``) and :func:`to_torchrl` (a TorchRL ``EnvBase``).

Each imports its library only when called, so ``import hub.export`` works on a bare install.

Example:
    >>> import hub
    >>> genv = hub.to_gymnasium(hub.make_env("hub:Pendulum"))
    >>> genv.observation_space.shape
    (3,)
"""

from hub.export.gymnasium_env import to_gymnasium
from hub.export.sb3 import to_sb3
from hub.export.torchrl_env import to_torchrl

__all__ = ["to_gymnasium", "to_sb3", "to_torchrl"]
