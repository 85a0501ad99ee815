"""Control transforms: ``ConditionalSkip`` (skip steps on a condition) and
``FiniteTensorDictCheck`` (fail on NaN or infinite outputs).

Example:
    >>> import torch
    >>> import hub
    >>> from hub.transforms import FiniteTensorDictCheck, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Pendulum"), FiniteTensorDictCheck())
    >>> env.rollout(3).batch_size
    torch.Size([3])
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from tensordict import TensorDictBase

from hub.errors import SpecMismatchError
from hub.transforms.transform import Transform

__all__ = ["ConditionalSkip", "FiniteTensorDictCheck"]


class ConditionalSkip(Transform):
    """Skip the step of the sub-envs for which ``cond(tensordict)`` is ``True``: they keep
    their data (as with a ``"_step"`` mask), the others step.

    Args:
        cond: reads the step's input and returns a boolean tensor of the batch shape (a trailing
            dim of size 1 is allowed).

    Example:
        >>> import torch
        >>> import hub
        >>> from hub.transforms import ConditionalSkip, TransformedEnv
        >>> base = hub.make_env("hub:Counting", num_envs=2, batching="serial")
        >>> env = TransformedEnv(base, ConditionalSkip(lambda td: td["observation"] >= 1))
        >>> td = env.reset()
        >>> td["observation"] = torch.tensor([[0], [1]])
        >>> env.rand_step(td)["next", "observation"].squeeze(-1).tolist()
        [1, 1]
    """

    def __init__(self, cond: Callable[[TensorDictBase], torch.Tensor]) -> None:
        super().__init__()
        if not callable(cond):
            raise TypeError(f"ConditionalSkip needs a callable condition, got {cond!r}.")
        self.cond = cond

    @property
    def has_inverse(self) -> bool:
        return True

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        skip = torch.as_tensor(self.cond(tensordict), dtype=torch.bool)
        batch = tensordict.batch_size
        if skip.shape != batch:
            skip = skip.reshape(batch)
        if not bool(skip.any()):
            return tensordict
        step = tensordict.get("_step", None)
        keep = ~skip if step is None else step & ~skip
        tensordict.set("_step", keep)
        return tensordict


class FiniteTensorDictCheck(Transform):
    """Raise :class:`hub.errors.SpecMismatchError` when an output (step or reset) holds NaN or an
    infinite value, naming the entry.

    Example:
        >>> import torch
        >>> from tensordict import TensorDict
        >>> from hub.transforms import FiniteTensorDictCheck
        >>> FiniteTensorDictCheck()(TensorDict(x=torch.tensor([1.0, float("nan")])))
        Traceback (most recent call last):
        ...
        hub.errors.SpecMismatchError: entry 'x' does not match its spec: expected finite values, got a tensor holding NaN or infinite values: [1.0, nan].
    """

    def _check(self, tensordict: TensorDictBase) -> TensorDictBase:
        for key, value in tensordict.items(include_nested=True, leaves_only=True):
            if isinstance(value, torch.Tensor) and value.is_floating_point():
                if not bool(torch.isfinite(value).all()):
                    shown = value.flatten()[:8].tolist()
                    raise SpecMismatchError(
                        key,
                        "finite values",
                        f"a tensor holding NaN or infinite values: {shown}",
                    )
        return tensordict

    def _apply_keys(self, tensordict: TensorDictBase, strict: bool) -> TensorDictBase:
        return self._check(tensordict)
