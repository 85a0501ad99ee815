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
only the part of hub that a name needs is imported when the name is first used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    # specs and errors
    "specs": "hub.specs",
    "errors": "hub.errors",
    # the env contract
    "EnvBase": "hub.envs",
    "EnvWrapper": "hub.envs",
    "GymLikeEnv": "hub.envs",
    "step_mdp": "hub.envs",
    "check_env_specs": "hub.envs",
    "RandomPolicy": "hub.envs",
    "terminated_or_truncated": "hub.envs",
    "make_composite_from_td": "hub.envs",
    # batching
    "SerialEnv": "hub.batching",
    "ParallelEnv": "hub.batching",
    # transforms
    "transforms": "hub.transforms",
    "TransformedEnv": "hub.transforms",
    "Compose": "hub.transforms",
    # version dispatch and backend families
    "implement_for": "hub.dispatch",
    "set_gym_backend": "hub.dispatch",
    "gym_backend": "hub.dispatch",
    "set_backend": "hub.dispatch",
    "get_backend": "hub.dispatch",
    "BackendFamily": "hub.dispatch",
    # plugins
    "hookimpl": "hub.plugins",
    "Namespace": "hub.plugins",
    "SpecConversion": "hub.plugins",
    "BatchingStrategy": "hub.plugins",
    "PluginInfo": "hub.plugins",
    # the registry
    "make_env": "hub.registry",
    "list_envs": "hub.registry",
    "list_plugins": "hub.registry",
    "register_spec_conversion": "hub.registry",
    "convert_spec": "hub.registry",
    # export to other APIs
    "to_gymnasium": "hub.export",
    "to_sb3": "hub.export",
    "to_torchrl": "hub.export",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module_name = _LAZY.get(name)
    if module_name is None:
        raise AttributeError(f"module 'hub' has no attribute {name!r}")
    module = importlib.import_module(module_name)
    value = module if module_name == f"hub.{name}" else getattr(module, name)
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from hub import errors, specs, transforms
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
