"""Making envs and listing their ids, per version.

* gym 0.24–0.26 and gymnasium 0.26 run a passive env checker that calls ``np.bool8``, which
  numpy 2 removed (``AttributeError: module 'numpy' has no attribute 'bool8'``); hub passes
  ``disable_env_checker=True`` there unless told otherwise.
* gym < 0.24 keeps its registry in an ``EnvRegistry`` object (``registry.all()``); later
  versions in a dict.
* gymnasium >= 1.0 no longer loads third-party env packages by itself: ids starting with
  ``ALE/`` need ``import ale_py`` first, MiniGrid's ``import minigrid`` and so on
  (:mod:`hub_gym.suites`).

Example:
    >>> import hub
    >>> from hub_gym.compat.make import default_make_kwargs
    >>> with hub.set_gym_backend("gymnasium"):  # {} from gymnasium 0.27 on
    ...     set(default_make_kwargs()) <= {"disable_env_checker"}
    True
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

import hub
from hub_gym import suites

__all__ = ["default_make_kwargs", "list_env_ids", "import_env_package", "import_env_packages"]

_NO_CHECKER = {"disable_env_checker": True}

# id prefix -> the package that registers those ids when imported (the ecosystem's suites)
ENV_PACKAGES = suites.ENV_PACKAGES


@hub.implement_for("gymnasium", "0.27")
def default_make_kwargs() -> dict[str, Any]:
    """Nothing to add (gymnasium >= 0.27 runs on numpy 2)."""
    return {}


@default_make_kwargs.register("gymnasium", None, "0.27")
def _() -> dict[str, Any]:
    """gymnasium 0.26: its env checker fails on numpy 2."""
    return dict(_NO_CHECKER)


@default_make_kwargs.register("gym", "0.24")
def _() -> dict[str, Any]:
    """gym 0.24–0.26: its env checker fails on numpy 2."""
    return dict(_NO_CHECKER)


@default_make_kwargs.register("gym", None, "0.24")
def _() -> dict[str, Any]:
    """gym < 0.24 has no env checker."""
    return {}


@hub.implement_for("gymnasium")
def list_env_ids(backend: Any) -> list[str]:
    """Every registered id (gymnasium's registry is a dict)."""
    return list(backend.envs.registry.keys())


@list_env_ids.register("gym", "0.24")
def _(backend: Any) -> list[str]:
    """Every registered id (gym >= 0.24 keeps a dict)."""
    return list(backend.envs.registry.keys())


@list_env_ids.register("gym", None, "0.24")
def _(backend: Any) -> list[str]:
    """Every registered id (gym < 0.24 keeps an ``EnvRegistry``)."""
    return [spec.id for spec in backend.envs.registry.all()]


def import_env_package(env_id: str) -> None:
    """Import the package that registers ``env_id`` (``ale_py`` for ``ALE/...``), if installed.

    Example:
        >>> import_env_package("CartPole-v1")  # nothing to import
    """
    for prefix, package in ENV_PACKAGES.items():
        if env_id.startswith(prefix) and importlib.util.find_spec(package) is not None:
            importlib.import_module(package)


def import_env_packages() -> None:
    """Import every installed package of :data:`ENV_PACKAGES` (before listing ids).

    Example:
        >>> import_env_packages()
    """
    for package in ENV_PACKAGES.values():
        if importlib.util.find_spec(package) is not None:
            importlib.import_module(package)
