"""The slot through which ``hub.registry`` hands ``convert_spec`` down to ``hub.external``.

Light on purpose (no torch): ``hub.registry`` imports it on its own import and fills it. Until
then :func:`installed` gives a function that calls ``hub.convert_spec``, the public name of the
root package (imported on its first use), so that an ``ExternalEnv`` built from gym or gymnasium
spaces works in a process that never imported ``hub.registry``.

Example:
    >>> from hub.external.converter import installed, set_spec_converter
    >>> previous = installed()
    >>> set_spec_converter(None)
    >>> installed().__name__
    '_public_convert_spec'
    >>> set_spec_converter(previous)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["set_spec_converter", "installed"]

_converter: Callable[..., Any] | None = None


def set_spec_converter(convert: Callable[..., Any] | None) -> None:
    """Install the function that turns a foreign space (a gymnasium ``Box``...) into a hub spec;
    ``hub.registry`` installs ``hub.convert_spec``. ``None`` removes it."""
    global _converter
    _converter = convert


def installed() -> Callable[..., Any]:
    """The installed conversion, else one through ``hub.convert_spec``."""
    return _converter if _converter is not None else _public_convert_spec


def _public_convert_spec(space: Any, **kwargs: Any) -> Any:
    """``hub.convert_spec(space)``: the root package's public name, imported on first use."""
    import hub

    return hub.convert_spec(space, **kwargs)
