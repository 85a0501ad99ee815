"""hub's EnvPool plugin: EnvPool's C++ thread pool as natively batched hub envs.

``hub.make_env("envpool:Pong-v5", num_envs=8)`` builds a :class:`MultiThreadedEnv` of batch
size ``[8]``; without ``num_envs`` it is one env of batch size ``[]``. Importing this package
imports neither EnvPool nor gym: the names below load on first use.

Example:
    >>> import hub_envpool
    >>> hub_envpool.MultiThreadedEnv(2, "CartPole-v1").batch_size
    torch.Size([2])
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_envpool.env import MultiThreadedEnv, MultiThreadedEnvWrapper
