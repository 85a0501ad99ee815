"""The plugin that serves the ``hub:`` namespace: hub's own pure-torch envs.

It is declared in hub's ``pyproject.toml`` as the entry point ``hub = "hub_builtin.plugin"`` of
group ``hub.plugins`` and loaded exactly like a third-party plugin; it uses only hub's public API.
The envs need no backend library, so ``hub:`` works on a bare install. They batch natively: one
env object with batch size ``[num_envs]``.

Example:
    >>> import hub
    >>> hub.make_env("hub:Counting", num_envs=3).batch_size
    torch.Size([3])
"""

from __future__ import annotations

import inspect
from typing import Any

import hub

__all__ = ["hub_namespaces", "make", "list_envs"]


def make(env_id: str, num_envs: int | None = None, **kwargs: Any) -> hub.EnvBase:
    """Build the built-in env ``env_id``; ``num_envs=N`` gives one env of batch size ``[N]``.

    ``render_mode`` is taken by every built-in env, as by gymnasium's ``make``: ``None`` by all,
    ``"rgb_array"`` by those that render (Pendulum); the others say they cannot.

    Example:
        >>> make("Pendulum").batch_size
        torch.Size([])
    """
    from hub.envs.builtin import BUILTIN_ENVS

    try:
        cls = BUILTIN_ENVS[env_id]
    except KeyError:
        known = ", ".join(sorted(BUILTIN_ENVS))
        raise hub.errors.UnknownEnvError(
            f"The namespace 'hub' has no env {env_id!r}; its envs are {known}.", env_id=env_id
        ) from None
    batch_size = (num_envs,) if num_envs is not None else ()
    if "render_mode" in kwargs and "render_mode" not in inspect.signature(cls.__init__).parameters:
        mode = kwargs.pop("render_mode")
        if mode is not None:
            raise hub.errors.HubError(
                f"hub:{env_id} does not render (render_mode={mode!r}); hub:Pendulum does, "
                "with render_mode='rgb_array'."
            )
    return cls(batch_size=batch_size, **kwargs)


def list_envs() -> list[str]:
    """The ids of the built-in envs.

    Example:
        >>> "Pendulum" in list_envs()
        True
    """
    from hub.envs.builtin import BUILTIN_ENVS

    return sorted(BUILTIN_ENVS)


@hub.hookimpl
def hub_namespaces() -> list[hub.Namespace]:
    """The ``hub`` namespace."""
    return [
        hub.Namespace(
            "hub",
            make=make,
            list_envs=list_envs,
            native_batching=True,
            description="hub's pure-torch envs (Pendulum, Counting, ...): no backend needed",
        )
    ]
