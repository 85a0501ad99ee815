"""Specs: what shape, dtype, device and values each entry of a tensordict may have.

Every spec has ``shape`` (batch dims first, ``-1`` for a dynamic dim), ``dtype``, ``device``,
``rand()``, ``zero()``, ``one()``, ``is_in()``, ``assert_is_in()``, ``project()``, ``encode()``,
``expand()``, indexing, ``squeeze()``/``unsqueeze()``, ``clone()``, ``to()`` and ``==``.
The names and semantics follow TorchRL's specs; TorchRL's older names are kept as aliases.

Example:
    >>> import torch
    >>> from hub.specs import Composite, Bounded, Categorical
    >>> spec = Composite(action=Bounded(-1.0, 1.0, shape=(2,)), done=Categorical(2, dtype=torch.bool))
    >>> td = spec.rand()
    >>> spec.is_in(td)
    True
"""

from hub.specs.base import TensorSpec
from hub.specs.binary import Binary
from hub.specs.bounded import Bounded
from hub.specs.categorical import Categorical
from hub.specs.composite import Composite
from hub.specs.dtypes import numpy_dtype, torch_dtype
from hub.specs.keys import NestedKey
from hub.specs.multi import MultiCategorical, MultiOneHot
from hub.specs.non_tensor import NonTensor, non_tensor_spec
from hub.specs.one_hot import OneHot
from hub.specs.unbounded import Unbounded

# TorchRL's older class names, for code written against them
BoundedTensorSpec = Bounded
UnboundedContinuousTensorSpec = Unbounded
DiscreteTensorSpec = Categorical
OneHotDiscreteTensorSpec = OneHot
MultiDiscreteTensorSpec = MultiCategorical
MultiOneHotDiscreteTensorSpec = MultiOneHot
BinaryDiscreteTensorSpec = Binary
CompositeSpec = Composite
NonTensorSpec = NonTensor

__all__ = [
    "TensorSpec",
    "Unbounded",
    "Bounded",
    "Categorical",
    "OneHot",
    "MultiCategorical",
    "MultiOneHot",
    "Binary",
    "Composite",
    "NestedKey",
    "NonTensor",
    "non_tensor_spec",
    "numpy_dtype",
    "torch_dtype",
    "BoundedTensorSpec",
    "UnboundedContinuousTensorSpec",
    "DiscreteTensorSpec",
    "OneHotDiscreteTensorSpec",
    "MultiDiscreteTensorSpec",
    "MultiOneHotDiscreteTensorSpec",
    "BinaryDiscreteTensorSpec",
    "CompositeSpec",
    "NonTensorSpec",
]
