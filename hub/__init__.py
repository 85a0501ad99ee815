"""hub: a plugin-based environment hub for reinforcement learning.

One object model (a TensorDict-speaking :class:`EnvBase` with precise specs), one batching engine
and one transform engine; every simulator library plugs in as a plugin.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Pendulum")
    >>> data = env.rollout(3)
    >>> data.batch_size
    torch.Size([3])

Public names are imported lazily: ``import hub`` loads no plugin and no backend library, and
only the part of hub that a name needs is imported when the name is first used. They are
declared once, in the ``TYPE_CHECKING`` block at the end of this file, which type checkers
read and :func:`hub.lazy.lazy_exports` reads too. Every subpackage is reachable the same way
(``hub.export.to_torchrl``, ``hub.external.ExternalEnv``, ``hub.media.write_video``) without
importing it first, except the conformance kit, ``hub.testing``, which nothing in hub imports
(``import hub.testing``).
"""

import typing as _typing

from hub.lazy import lazy_exports as _lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = _lazy_exports(__name__, __file__)

if _typing.TYPE_CHECKING:  # the public names: read by type checkers and by lazy_exports
    from hub import (
        batching,
        cli,
        dispatch,
        envs,
        errors,
        export,
        external,
        lazy,
        media,
        plugins,
        registry,
        specs,
        transforms,
    )
    from hub.batching import ParallelEnv, SerialEnv
    from hub.dispatch import (
        BackendFamily,
        get_backend,
        gym_backend,
        implement_for,
        set_backend,
        set_gym_backend,
    )
    from hub.envs import (
        EnvBase,
        EnvWrapper,
        GymLikeEnv,
        RandomPolicy,
        check_env_specs,
        make_composite_from_td,
        step_mdp,
        terminated_or_truncated,
    )
    from hub.export import to_gymnasium, to_sb3, to_torchrl
    from hub.plugins import BatchingStrategy, Namespace, PluginInfo, SpecConversion, hookimpl
    from hub.registry import (
        convert_spec,
        list_envs,
        list_plugins,
        make_env,
        register_spec_conversion,
    )
    from hub.transforms import Compose, TransformedEnv
