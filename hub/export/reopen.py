"""How to build a closed env again, for exports whose library reuses envs after ``close()``.

A hub env that was closed stays closed (``ClosedEnvError`` on any use). TorchRL's rule is
different: ``close()`` releases an env's resources and the env may be used again (its batched
envs restart their workers; its gym wrappers keep the gym env, which tolerates it). TorchRL's
``Collector`` closes its env when it reaches ``total_frames``, and TorchRL's tutorials then
evaluate on that same env. The TorchRL export (:func:`hub.to_torchrl`) follows TorchRL's rule
by building a new hub env the first time it is used after ``close()``, with the factory kept
here: :func:`hub.make_env` records one for every env it returns (its own arguments, with new
copies of the transforms), and ``to_torchrl(env, reopen=fn)`` takes one for envs built by
hand.

The new env is seeded, when the closed one had been, with the seed that the closed env's
``set_seed`` named for the next env, so its episodes are not a replay of the first ones.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting", max_steps=3)
    >>> factory_of(env)().max_steps
    3
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import Any

__all__ = ["remember_factory", "factory_of", "Factory"]

Factory = Callable[[], Any]

_FACTORIES: weakref.WeakKeyDictionary[Any, Factory] = weakref.WeakKeyDictionary()


def remember_factory(env: Any, factory: Factory) -> None:
    """Keep ``factory`` (a function of no argument that builds an env like ``env``) for ``env``.

    Example:
        >>> import hub
        >>> env = hub.make_env("hub:Counting")
        >>> remember_factory(env, lambda: hub.make_env("hub:Counting"))
        >>> factory_of(env) is not None
        True
    """
    try:
        _FACTORIES[env] = factory
    except TypeError:  # an object that cannot be weakly referenced: nothing to remember
        pass


def factory_of(env: Any) -> Factory | None:
    """The factory kept for ``env`` (``None`` when it was not built by :func:`hub.make_env`).

    Example:
        >>> from hub.envs.builtin import CountingEnv
        >>> factory_of(CountingEnv()) is None
        True
    """
    try:
        return _FACTORIES.get(env)
    except TypeError:
        return None
