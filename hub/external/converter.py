"""The slot through which ``hub.registry`` hands ``convert_spec`` down to ``hub.external``.

Light on purpose (no torch): ``hub.registry`` imports it on its own import.

Example:
    >>> from hub.external.converter import installed, set_spec_converter
    >>> previous = installed()
    >>> set_spec_converter(None)
    >>> installed() is None
    True
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


def installed() -> Callable[..., Any] | None:
    """The installed conversion, or ``None``."""
    return _converter
