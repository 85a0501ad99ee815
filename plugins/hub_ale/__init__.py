"""hub's ALE plugin: ale-py's own C++ vector env (``AtariVectorEnv``) as natively batched hub envs.

``hub.make_env("ale:Pong-v5", num_envs=8)`` builds an :class:`AleEnv` with the keys, specs and
frame preprocessing of ``envpool:Pong-v5``, so that switching backend is changing the namespace.
Importing this package imports neither ale-py nor torch: the names below load on first use.

Example:
    >>> import hub_ale
    >>> hub_ale.AleEnv("Pong-v5", num_envs=2).observation_spec["observation"].shape
    torch.Size([2, 4, 84, 84])
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_ale.env import AleEnv
    from hub_ale.runner import AleRunner
