"""hub's JAX plugin: JAX environments (gymnax, Brax, Craftax) as natively batched hub envs.

``hub.make_env("gymnax:CartPole-v1", num_envs=4096)`` builds a :class:`JaxEnv` whose sub-envs
are stepped together by one jitted ``jax.vmap`` of the library's step; its observations reach
torch through DLPack without a copy on the CPU. Importing this package imports neither JAX nor
torch: the names below load on first use.

Example:
    >>> import hub_jax
    >>> hub_jax.JaxEnv.from_gymnax("CartPole-v1", num_envs=2).batch_size
    torch.Size([2])
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_jax.env import JaxEnv
    from hub_jax.runner import JaxRunner
    from hub_jax.simulator import Simulator
