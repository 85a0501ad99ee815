"""hub's Ray plugin: ``batching="ray"``, envs spread over the actors of a Ray cluster.

``hub.make_env("gymnasium:CartPole-v1", num_envs=64, batching="ray", envs_per_actor=32)`` builds
a :class:`RayEnv` of batch size ``[64]`` whose two Ray actors each hold one hub env of batch size
``[32]``. Importing this package imports neither Ray nor torch: the names below load on first
use.

Example:
    >>> import hub_ray
    >>> hub_ray.RayEnv  # doctest: +SKIP
    <class 'hub_ray.env.RayEnv'>
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_ray.env import RayEnv
    from hub_ray.faults import ActorRestartWarning
