"""The specs of a :class:`RayEnv`: its actors' specs joined along the env dim.

Example:
    >>> import torch
    >>> from hub.specs import Bounded, Composite
    >>> one = Composite(x=Bounded(0, 1, shape=(2, 3)), shape=(2,))
    >>> joined = join_specs([one, one.clone()], "full_observation_spec")
    >>> joined.shape, joined["x"].shape
    (torch.Size([4]), torch.Size([4, 3]))
"""

from __future__ import annotations

from collections.abc import Sequence

from hub.batching import join_specs as join_batches
from hub.specs import Composite

__all__ = ["join_specs"]


def join_specs(specs: Sequence[Composite], name: str) -> Composite:
    """One spec from the actors' specs (each of batch ``[k_i, ...]``), of batch ``[sum k_i, ...]``
    (:func:`hub.batching.join_specs`, whose errors name the actor)."""
    return join_batches(specs, name, part="actor", whole="a RayEnv")
