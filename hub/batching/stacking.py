"""Fast stacking and splitting of tensordicts that share one structure.

``torch.stack`` on a list of TensorDicts re-validates the structure of each; batched envs stack
outputs of identical structure every step, so they stack leaf by leaf instead.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> tds = [TensorDict({"a": torch.zeros(2), "b": {"c": torch.ones(1)}}, []) for _ in range(3)]
    >>> stack_like(tds).batch_size, stack_like(tds)["b", "c"].shape
    (torch.Size([3]), torch.Size([3, 1]))
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from tensordict import TensorDict, TensorDictBase, is_tensor_collection

__all__ = ["stack_like", "split_inputs"]


def stack_like(
    tds: Sequence[TensorDictBase | None], fallback: TensorDictBase | None = None
) -> TensorDictBase:
    """Stack tensordicts of one structure along a new first dim, leaf by leaf.

    A ``None`` in ``tds`` takes the matching row of ``fallback`` (or zeros when ``fallback`` lacks
    the entry): batched envs use it for the sub-envs they did not step or reset.
    """
    template = next((td for td in tds if td is not None), None)
    if template is None:
        raise ValueError("stack_like needs at least one tensordict that is not None.")
    n = len(tds)
    return _stack_level(template, tds, fallback, (), n)


def _stack_level(
    template: TensorDictBase,
    tds: Sequence[TensorDictBase | None],
    fallback: TensorDictBase | None,
    prefix: tuple[str, ...],
    n: int,
) -> TensorDictBase:
    out = {}
    for key, value in template.items():
        full = prefix + (key,)
        if is_tensor_collection(value):
            out[key] = _stack_level(value, tds, fallback, full, n)
            continue
        if not isinstance(value, torch.Tensor):
            out[key] = torch.stack([td.get(full) for td in tds]) if None not in tds else value
            continue
        rows = []
        rest = None
        for i, td in enumerate(tds):
            if td is not None:
                rows.append(td.get(full))
                continue
            if rest is None:
                prev = fallback.get(full, None) if fallback is not None else None
                if isinstance(prev, torch.Tensor) and prev.shape[1:] == value.shape:
                    rest = prev.unbind(0)
                else:
                    rest = [torch.zeros_like(value)] * n
            rows.append(rest[i])
        out[key] = torch.stack(rows)
    return TensorDict(out, batch_size=(n,) + template.batch_size, device=template.device)


def split_inputs(
    data: TensorDictBase, keys: Sequence[str | tuple[str, ...]], sub_batch: torch.Size
) -> list[TensorDictBase]:
    """Split the ``keys`` entries of ``data`` (batch ``[n, ...]``) into one tensordict per row."""
    n = data.batch_size[0]
    if all(isinstance(key, str) for key in keys):
        columns = {key: data.get(key).unbind(0) for key in keys}
        return [
            TensorDict({key: col[i] for key, col in columns.items()}, batch_size=sub_batch)
            for i in range(n)
        ]
    selected = data.select(*keys)
    return [selected[i] for i in range(n)]
