"""The env contract: ``EnvBase``, ``EnvWrapper``, ``GymLikeEnv`` and their helpers.

Example:
    >>> from hub.envs import EnvBase, check_env_specs, step_mdp
"""

from hub.envs.base import EnvBase
from hub.envs.gym_like import GymLikeEnv
from hub.envs.seeding import derived_seed, next_seed
from hub.envs.spec_check import check_env_specs
from hub.envs.utils import RandomPolicy, make_composite_from_td, step_mdp, terminated_or_truncated
from hub.envs.wrapper import EnvWrapper

__all__ = [
    "EnvBase",
    "EnvWrapper",
    "GymLikeEnv",
    "RandomPolicy",
    "check_env_specs",
    "derived_seed",
    "make_composite_from_td",
    "next_seed",
    "step_mdp",
    "terminated_or_truncated",
]
