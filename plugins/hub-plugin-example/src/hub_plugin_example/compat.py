"""Version differences of the libraries this plugin uses, one dispatched function each.

``numpy.array(x, copy=False)`` meant "copy only if needed" before numpy 2.0; since 2.0 it means
"never copy" and raises when a copy is needed, and "copy only if needed" is spelled
``copy=None``, which numpy 1 rejects. :func:`hub.implement_for` picks the spelling of the numpy
that is installed, found from its metadata without importing it.

Example:
    >>> as_float_array([1, 2]).dtype
    dtype('float32')
    >>> [impl.range for impl in as_float_array.implementations]
    ['<2.0', '>=2.0']
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["as_float_array"]


@hub.implement_for("numpy", None, "2.0")
def as_float_array(value: Any) -> Any:
    """``value`` as a float32 numpy array, copied only if needed (numpy < 2.0)."""
    import numpy as np

    return np.array(value, dtype=np.float32, copy=False)


@as_float_array.register(from_version="2.0")
def _(value: Any) -> Any:
    """``value`` as a float32 numpy array, copied only if needed (numpy >= 2.0)."""
    import numpy as np

    return np.array(value, dtype=np.float32, copy=None)
