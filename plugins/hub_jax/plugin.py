"""The plugin module (entry point ``jax = "hub_jax.plugin"``): JAX environments.

* ``gymnax:`` every gymnax env (``hub.make_env("gymnax:CartPole-v1", num_envs=4096)``) but
  ``MNISTBandit-bsuite``, which downloads a data set when it is built;
* ``brax:`` every Brax env (``"brax:ant"``), truncated after ``episode_length=1000`` steps;
* ``craftax:`` Craftax and Craftax-Classic, symbolic and pixels (``"craftax:Craftax-Classic-Symbolic-v1"``);
* ``jumanji:`` every Jumanji env but ``Sokoban-v0``, which downloads its levels when it is built;
* spec conversions for gymnax's and Craftax's spaces.

Each namespace batches natively: ``num_envs=N`` gives one :class:`~hub_jax.JaxEnv` whose sub-envs
are stepped by one jitted ``jax.vmap``. Importing this module imports neither JAX nor torch.

Example:
    >>> [ns.name for ns in hub_namespaces()]
    ['gymnax', 'brax', 'craftax', 'jumanji']
"""

from __future__ import annotations

from functools import partial
from typing import Any

import hub

__all__ = ["hub_namespaces", "hub_spec_conversions", "make", "list_envs"]

_CONSTRUCTORS = {
    "gymnax": "from_gymnax",
    "brax": "from_brax",
    "craftax": "from_craftax",
    "jumanji": "from_jumanji",
}


def make(library: str, env_id: str, num_envs: int | None = None, **kwargs: Any) -> hub.EnvBase:
    """Build ``env_id`` of ``library`` with ``num_envs`` sub-envs (``None``: batch size ``[]``).

    Example:
        >>> make("gymnax", "CartPole-v1", num_envs=2).batch_size
        torch.Size([2])
    """
    from hub_jax.env import JaxEnv

    return getattr(JaxEnv, _CONSTRUCTORS[library])(env_id, num_envs, **kwargs)


def list_envs(library: str) -> list[str]:
    """The ids ``library`` serves.

    Example:
        >>> "CartPole-v1" in list_envs("gymnax")
        True
    """
    if library == "brax":
        from hub_jax.brax_family import brax_ids

        return brax_ids()
    if library == "jumanji":
        from hub_jax.jumanji_family import jumanji_ids

        return jumanji_ids()
    from hub_jax import gymnax_family

    return gymnax_family.gymnax_ids() if library == "gymnax" else gymnax_family.craftax_ids()


def _convert(name: str, space: Any, **kwargs: Any) -> Any:
    from hub_jax import spaces

    return getattr(spaces, name)(space, **kwargs)


#: dotted class names of the spaces :mod:`hub_jax.spaces` converts -> the name of the converter
SPACE_TYPES = {
    f"{module}.{cls}": converter
    for module in ("gymnax.environments.spaces", "craftax.environment_base.spaces")
    for cls, converter in (
        ("Box", "box_to_spec"),
        ("Discrete", "discrete_to_spec"),
        ("Dict", "dict_to_spec"),
        ("Tuple", "tuple_to_spec"),
    )
}

_NAMESPACES = (
    ("gymnax", ">=0.0.9,<1.1", "gymnax's JAX envs (classic control, MinAtar, bsuite, misc)"),
    ("brax", ">=0.14,<0.15", "Brax's physics envs (ant, humanoid, ...), in JAX"),
    ("craftax", ">=1.6,<1.7", "Craftax and Craftax-Classic, in JAX"),
    ("jumanji", ">=1.1,<1.2", "Jumanji's JAX envs (routing, packing, logic, multi-agent)"),
)


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """``gymnax:``, ``brax:``, ``craftax:`` and ``jumanji:``."""
    return [
        hub.Namespace(
            name,
            make=partial(make, name),
            list_envs=partial(list_envs, name),
            native_batching=True,
            extra="jax",
            requires=("jax", name),
            description=f"{description}, batched by jax.vmap",
            supported={name: versions, "jax": ">=0.10,<0.11"},
        )
        for name, versions, description in _NAMESPACES
    ]


@hub.hookimpl
def hub_spec_conversions() -> list[hub.SpecConversion]:
    """Converters for ``gymnax.environments.spaces.*`` and ``craftax.environment_base.spaces.*``."""
    return [
        hub.SpecConversion(type_name, convert=partial(_convert, converter))
        for type_name, converter in SPACE_TYPES.items()
    ]
