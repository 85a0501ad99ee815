"""The specs an :class:`~hub.external.ExternalEnv` is built from: hub specs, or foreign spaces
converted through :mod:`hub.external.converter` (``hub.convert_spec``).

Example:
    >>> from hub.specs import Categorical, Unbounded
    >>> obs, action = episode_specs(Unbounded((3,)), Categorical(2))
    >>> obs.keys(), action.shape
    (['observation'], torch.Size([]))
"""

from __future__ import annotations

from typing import Any

from hub.errors import HubError
from hub.external import converter
from hub.specs import Composite, NonTensor, TensorSpec

__all__ = ["as_hub_spec", "episode_specs"]


def as_hub_spec(value: Any, what: str) -> TensorSpec:
    """``value`` if it is a hub spec, else its conversion (a gymnasium space, a dm_env spec)."""
    if isinstance(value, TensorSpec):
        return value
    convert = converter.installed()
    return convert(value)


def episode_specs(observation: Any, action: Any) -> tuple[Composite, TensorSpec]:
    """One episode's observation Composite (a leaf spec goes under ``"observation"``) and action
    leaf spec, both without batch dims, checked for what the external protocol can carry."""
    obs = as_hub_spec(observation, "observation spec")
    act = as_hub_spec(action, "action spec")
    if not isinstance(obs, Composite):
        obs = Composite(observation=obs)
    if isinstance(act, Composite):
        leaves = act.keys(include_nested=True, leaves_only=True)
        if len(leaves) != 1:
            raise HubError(
                f"ExternalEnv takes one action entry, got a Composite with {len(leaves)}: "
                f"{leaves}. Pass the action leaf spec."
            )
        act = act[leaves[0]]
    for key, leaf in obs.items(include_nested=True, leaves_only=True):
        if not isinstance(key, str):
            raise HubError(
                f"ExternalEnv's observations are flat dicts; {key!r} is nested. Flatten the "
                "observation spec (one key per array)."
            )
        if isinstance(leaf, NonTensor) or -1 in leaf.shape:
            raise HubError(
                f"ExternalEnv's observation {key!r} must be an array of fixed shape, got {leaf!r}."
            )
    return obs, act
