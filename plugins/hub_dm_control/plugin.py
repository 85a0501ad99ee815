"""The plugin module (entry point ``dm_control = "hub_dm_control.plugin"``).

* the namespace ``dm_control:``, one id per task of ``dm_control.suite.ALL_TASKS``
  (``"cheetah/run"``), listed only when asked; ``hub.make_env("dm_control:cheetah/run",
  num_envs=4)`` batches copies with hub's ``ParallelEnv`` (dm_control has no batching of its own);
* spec conversions for ``dm_env.specs`` (``Array``, ``BoundedArray``, ``DiscreteArray``,
  ``StringArray``), keyed by dotted names so that nothing is imported to declare them.

Importing this module imports neither dm_control, dm_env nor mujoco.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['dm_control']
    >>> "cheetah/run" in list_envs()
    True
"""

from __future__ import annotations

from functools import partial
from typing import Any

import hub
from hub.registry import check_keywords, keywords_of

__all__ = ["hub_namespaces", "hub_spec_conversions", "make", "list_envs", "SPEC_CONVERTERS"]

#: dm_env spec class (in ``dm_env.specs``) -> name of its converter in :mod:`hub_dm_control.specs`
SPEC_CONVERTERS = {
    "Array": "array_to_spec",
    "BoundedArray": "bounded_array_to_spec",
    "DiscreteArray": "discrete_array_to_spec",
    "StringArray": "string_array_to_spec",
}


def make(env_id: str, **kwargs: Any) -> hub.EnvBase:
    """Build the suite task ``env_id`` (``"domain/task"``); keyword arguments go to
    :class:`hub_dm_control.DMControlEnv` (a name it does not take raises
    :class:`hub.errors.UnknownKeywordError` with the close matches).

    Example:
        >>> make("cartpole/balance", frame_skip=2).frame_skip
        2
    """
    from hub_dm_control.env import DMControlEnv

    domain, slash, task = env_id.partition("/")
    if not slash or not domain or not task:
        raise hub.errors.UnknownEnvError(
            f"dm_control ids are 'domain/task' (e.g. 'dm_control:cheetah/run'), got {env_id!r}.",
            env_id=env_id,
        )
    accepted = keywords_of(DMControlEnv, skip=("domain", "task", "env"))
    if accepted.complete:
        check_keywords(kwargs, accepted.names, uri=f"dm_control:{env_id}")
    return DMControlEnv(domain, task, **kwargs)


def list_envs() -> list[str]:
    """Every task of dm_control's suite, as ``"domain/task"``.

    Example:
        >>> list_envs()[:2]
        ['acrobot/swingup', 'acrobot/swingup_sparse']
    """
    from hub_dm_control.compat import suite_tasks

    return sorted(f"{domain}/{task}" for domain, task in suite_tasks())


def _convert(name: str, spec: Any, **kwargs: Any) -> Any:
    from hub_dm_control import specs

    return getattr(specs, name)(spec, **kwargs)


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``dm_control`` namespace."""
    return [
        hub.Namespace(
            "dm_control",
            make=make,
            list_envs=list_envs,
            native_batching=False,
            extra="dm-control",
            requires=("dm_control", "mujoco"),
            description="DeepMind Control Suite tasks (MuJoCo), ids 'domain/task'",
            supported={"dm-control": ">=1.0.20,<=1.0.50", "mujoco": ">=3.1.6,<4"},
        )
    ]


@hub.hookimpl
def hub_spec_conversions() -> list[hub.SpecConversion]:
    """Converters for ``dm_env.specs.*``."""
    return [
        hub.SpecConversion(f"dm_env.specs.{cls}", convert=partial(_convert, converter))
        for cls, converter in SPEC_CONVERTERS.items()
    ]
