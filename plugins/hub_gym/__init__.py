"""hub's gym and gymnasium plugin: ``GymEnv``, ``GymWrapper`` and the spec conversions.

It serves the namespaces ``gymnasium:`` and ``gym:`` and declares the backend family ``"gym"``
(candidates ``gymnasium``, then ``gym``). Importing this package imports neither gym nor
gymnasium, nor any of its own modules: names load on first use.

Example:
    >>> import hub
    >>> env = hub.make_env("gymnasium:CartPole-v1")
    >>> type(env).__name__, env.batch_size
    ('GymEnv', torch.Size([]))
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_gym.env import GymEnv, GymWrapper
    from hub_gym.info import InfoDictReader, default_info_dict_reader
