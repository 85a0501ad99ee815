"""The plugin module (entry point ``gym = "hub_gym.plugin"``): namespaces, conversions, family.

* namespaces ``gymnasium:`` and ``gym:``: ``hub.make_env("gymnasium:CartPole-v1", num_envs=4)``
  builds a :class:`~hub_gym.GymEnv` with that backend (``num_envs`` gives one gymnasium/gym
  vector env, natively batched);
* spec conversions for every ``gymnasium.spaces`` and ``gym.spaces`` class hub knows, and for
  MiniGrid's ``MissionSpace``, keyed by dotted names so that nothing is imported to declare them;
* the backend family ``"gym"`` with candidates ``gymnasium`` and ``gym``, which
  :func:`hub.set_gym_backend` chooses between.

Importing this module imports neither gym nor gymnasium.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['gymnasium', 'gym']
    >>> "gym.spaces.Box" in [c.type_name for c in hub_spec_conversions()]
    True
"""

from __future__ import annotations

from functools import partial
from typing import Any

import hub
from hub.dispatch import GYM_FAMILY  # declared by the core, which names it in set_gym_backend

__all__ = [
    "hub_namespaces",
    "hub_spec_conversions",
    "hub_backends",
    "make",
    "list_envs",
    "GYM_FAMILY",
]

BACKENDS = GYM_FAMILY.candidates
# the versions tox.ini tests (docs/compatibility.md)
SUPPORTED = {"gymnasium": ">=0.26,<1.5", "gym": ">=0.21,<0.27"}


# space class name (in ``<backend>.spaces``) -> name of its converter in hub_gym.spaces
SPACE_CONVERTERS = {
    "Box": "box_to_spec",
    "Discrete": "discrete_to_spec",
    "MultiDiscrete": "multi_discrete_to_spec",
    "MultiBinary": "multi_binary_to_spec",
    "Dict": "dict_to_spec",
    "Tuple": "tuple_to_spec",
    "Text": "text_to_spec",
    "Sequence": "sequence_to_spec",
    "Graph": "non_tensor_to_spec",
    "OneOf": "non_tensor_to_spec",
}


def make(backend: str, env_id: str, num_envs: int | None = None, **kwargs: Any) -> hub.EnvBase:
    """Build ``env_id`` with ``backend`` active (``num_envs``: one vector env of that size).

    A keyword that neither :class:`hub_gym.GymEnv`, the backend's ``make`` nor the env takes
    raises :class:`hub.errors.UnknownKeywordError` with the close matches.

    Example:
        >>> make("gymnasium", "Pendulum-v1").batch_size
        torch.Size([])
    """
    from hub_gym.env import GymEnv
    from hub_gym.keywords import unknown_keyword
    from hub_gym.placeholders import placeholder_error

    with hub.set_gym_backend(backend):
        placeholder = placeholder_error(hub.gym_backend(), env_id)
        if placeholder is not None:
            raise placeholder
        try:
            env = GymEnv(env_id, num_envs=num_envs, **kwargs)
        except TypeError as exc:
            error = unknown_keyword(exc, hub.gym_backend(), env_id, kwargs, f"{backend}:{env_id}")
            if error is None:
                raise
            raise error from exc
    if num_envs is not None and _vector_rewards(env._env):
        # gymnasium's vector envs keep one float reward per sub-env: a batch of envs with one
        # reward per objective (MO-Gymnasium) is a SerialEnv of single envs instead
        env.close()
        return hub.SerialEnv(int(num_envs), partial(make, backend, env_id, **kwargs))
    return env


def _vector_rewards(vector: Any) -> bool:
    """Whether the sub-envs of a ``SyncVectorEnv`` declare a ``reward_space`` of more than one
    number (MO-Gymnasium's envs), which the vector env cannot store."""
    envs = getattr(vector, "envs", None)
    if not envs:
        return False
    space = getattr(getattr(envs[0], "unwrapped", envs[0]), "reward_space", None)
    shape = tuple(getattr(space, "shape", None) or ())
    return space is not None and shape not in ((), (1,))


def list_envs(backend: str) -> list[str]:
    """The ids registered with ``backend``, without those it keeps only to raise an error
    (:mod:`hub_gym.placeholders`).

    Example:
        >>> "CartPole-v1" in list_envs("gymnasium")
        True
    """
    from hub_gym.compat import resolve_compat
    from hub_gym.compat.make import import_env_packages
    from hub_gym.placeholders import made_ids

    compat = resolve_compat(backend)
    if backend == "gymnasium":
        import_env_packages()  # ale-py registers its ids with gymnasium when imported
    return sorted(made_ids(compat.module, compat.list_env_ids(compat.module)))


def _convert(name: str, space: Any, **kwargs: Any) -> Any:
    from hub_gym import spaces

    return getattr(spaces, name)(space, **kwargs)


def optional_modules(backend: str) -> dict[str, str]:
    """The modules some of ``backend``'s envs need, with the line that installs each.

    Example:
        >>> optional_modules("gymnasium")["Box2D"]
        'pip install "gymnasium[box2d]"'
    """
    extras = {"Box2D": "box2d", "mujoco": "mujoco", "ale_py": "atari", "pygame": "classic-control"}
    return {module: f'pip install "{backend}[{extra}]"' for module, extra in extras.items()}


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """``gymnasium:`` and ``gym:``."""
    return [
        hub.Namespace(
            backend,
            make=partial(make, backend),
            list_envs=partial(list_envs, backend),
            native_batching=True,
            extra=backend,
            requires=(backend,),
            description=f"the envs registered with {backend} (vector envs for num_envs=N)",
            supported={backend: SUPPORTED[backend]},
            optional=optional_modules(backend),
        )
        for backend in BACKENDS
    ]


@hub.hookimpl
def hub_spec_conversions() -> list[hub.SpecConversion]:
    """Converters for ``gymnasium.spaces.*`` and ``gym.spaces.*``."""
    return [
        *(
            hub.SpecConversion(f"{backend}.spaces.{cls}", convert=partial(_convert, converter))
            for backend in BACKENDS
            for cls, converter in SPACE_CONVERTERS.items()
        ),
        hub.SpecConversion("minigrid.core.mission.MissionSpace", convert=_convert_mission),
    ]


def _convert_mission(space: Any, **kwargs: Any) -> Any:
    from hub_gym.mission import mission_to_spec

    return mission_to_spec(space, **kwargs)


@hub.hookimpl
def hub_backends() -> list[hub.BackendFamily]:
    """The ``"gym"`` family: gymnasium first, then gym."""
    return [GYM_FAMILY]
