"""``NestedKey``: how hub names an entry of a tensordict or a spec.

A root entry is a string (``"observation"``); a nested one is a tuple of strings
(``("agents", "action")``). Every module of hub and its plugins uses this one alias.

Example:
    >>> from hub.specs import NestedKey
    >>> key: NestedKey = ("agents", "reward")
"""

from __future__ import annotations

__all__ = ["NestedKey"]

NestedKey = str | tuple[str, ...]
"""A root key (``str``) or a nested key (a tuple of ``str``)."""
