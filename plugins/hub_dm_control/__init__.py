"""hub's dm_control plugin: ``DMControlEnv``, ``DMControlWrapper`` and the dm_env spec conversions.

It serves the namespace ``dm_control:`` with one id per task of dm_control's suite
(``"dm_control:cheetah/run"``). Importing this package imports neither dm_control nor mujoco,
nor any of its own modules: names load on first use.

Example:
    >>> import hub
    >>> env = hub.make_env("dm_control:cartpole/balance", seed=0)
    >>> type(env).__name__, env.batch_size
    ('DMControlEnv', torch.Size([]))
"""

import typing

from hub.lazy import lazy_exports

__getattr__, __dir__, __all__ = lazy_exports(__name__, __file__)

if typing.TYPE_CHECKING:  # the public names (read by type checkers and by lazy_exports)
    from hub_dm_control.env import DMControlEnv, DMControlWrapper
    from hub_dm_control.rendering import RenderingUnavailableError
