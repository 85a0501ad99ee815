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

import torch

from hub.errors import HubError
from hub.specs import Bounded, Composite

__all__ = ["join_specs"]


def join_specs(specs: Sequence[Composite], name: str) -> Composite:
    """One spec from the actors' specs (each of batch ``[k_i, ...]``), of batch ``[sum k_i, ...]``.

    Specs equal for every env are expanded; ``Bounded`` leaves whose bounds differ between envs
    are joined with per-env bounds. Anything else that differs raises: the envs of one
    ``RayEnv`` must produce data of one structure.
    """
    total = sum(spec.shape[0] for spec in specs)
    single = specs[0][0]
    out = single.expand((total,) + tuple(single.shape))
    if all(spec == single.expand(tuple(spec.shape)) for spec in specs):
        return out
    out = out.clone()
    out.unlock_()
    keys = list(single.keys(include_nested=True, leaves_only=True))
    for i, spec in enumerate(specs):
        other = list(spec.keys(include_nested=True, leaves_only=True))
        if sorted(map(str, other)) != sorted(map(str, keys)):
            raise HubError(
                f"actor {i} has other {name} entries than actor 0 ({other} against {keys}): the "
                "envs of a RayEnv must share their specs. Build them from one factory."
            )
    for key in keys:
        leaves = [spec[key] for spec in specs]
        first = leaves[0][0]
        if all(leaf == first.expand(tuple(leaf.shape)) for leaf in leaves):
            continue
        if all(type(leaf) is Bounded and leaf.dtype == first.dtype for leaf in leaves):
            out[key] = Bounded(
                torch.cat([leaf.low for leaf in leaves]),
                torch.cat([leaf.high for leaf in leaves]),
                shape=(total,) + tuple(first.shape),
                dtype=first.dtype,
                device=first.device,
            )
            continue
        bad = next(i for i, leaf in enumerate(leaves) if leaf != first.expand(tuple(leaf.shape)))
        raise HubError(
            f"actor {bad} has a different {name}[{key!r}] than actor 0: {leaves[bad]} against "
            f"{leaves[0]}. The envs of a RayEnv must share their specs (only the bounds of "
            "Bounded specs may differ). Build them from one factory."
        )
    return out
