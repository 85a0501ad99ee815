"""The spec-conversion registry: foreign space and spec types -> hub specs.

A conversion is keyed by the dotted path of the foreign class as a string
(``"gymnasium.spaces.Box"`` or ``"gymnasium.spaces.box.Box"``), so registering one imports
nothing. :func:`convert_spec` walks the class of its argument and its base classes (the MRO) and
uses the first that has a conversion, like :func:`functools.singledispatch`; a registered name is
resolved to its class only once its top-level package has been imported by someone else.

Conversions come from two places: :func:`register_spec_conversion` (these win) and the
``hub_spec_conversions`` hook of plugins.

Example:
    >>> import hub
    >>> class Box:
    ...     def __init__(self, n):
    ...         self.n = n
    >>> @hub.register_spec_conversion(f"{__name__}.Box")
    ... def box_to_tuple(space, **kwargs):
    ...     return ("spec", space.n)
    >>> hub.convert_spec(Box(3))
    ('spec', 3)
    >>> hub.registry.unregister_spec_conversion(f"{__name__}.Box")
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from hub.errors import SpecConversionError
from hub.plugins import ensure_plugins_loaded
from hub.plugins.types import dotted_name

__all__ = [
    "register_spec_conversion",
    "unregister_spec_conversion",
    "spec_conversions",
    "find_spec_conversion",
    "convert_spec",
]

Converter = Callable[..., Any]

_lock = threading.RLock()
_explicit: dict[str, Converter] = {}
_generation = 0
_cache: weakref.WeakKeyDictionary[type, Converter] = weakref.WeakKeyDictionary()
_cache_key: tuple[int, int, int] | None = None


def register_spec_conversion(
    type_name: str | type, convert: Converter | None = None
) -> Converter | Callable[[Converter], Converter]:
    """Register ``convert(obj, **kwargs) -> hub spec`` for instances of the class ``type_name``.

    ``type_name`` is the class's dotted path (a class is accepted too). A later registration for
    the same name replaces the earlier one, and wins over a plugin's. Without ``convert``, returns
    a decorator.

    Example:
        >>> import hub
        >>> hub.register_spec_conversion("toylib.spaces.Box", lambda space, **kw: None)
        <function <lambda> at ...>
        >>> "toylib" in __import__("sys").modules
        False
        >>> hub.registry.unregister_spec_conversion("toylib.spaces.Box")
    """
    key = dotted_name(type_name)
    if convert is None:

        def decorator(fn: Converter) -> Converter:
            register_spec_conversion(key, fn)
            return fn

        return decorator
    if not callable(convert):
        raise TypeError(f"a spec conversion must be callable, got {convert!r}.")
    global _generation
    with _lock:
        _explicit[key] = convert
        _generation += 1
    return convert


def unregister_spec_conversion(type_name: str | type) -> None:
    """Remove a conversion added with :func:`register_spec_conversion` (plugins' stay)."""
    global _generation
    key = dotted_name(type_name)
    with _lock:
        if _explicit.pop(key, None) is None:
            raise KeyError(f"no spec conversion is registered for {key!r}")
        _generation += 1


def spec_conversions() -> dict[str, Converter]:
    """Every conversion by dotted type name: the plugins', overridden by the registered ones.

    Example:
        >>> from hub.registry import spec_conversions
        >>> isinstance(spec_conversions(), dict)
        True
    """
    manager = ensure_plugins_loaded()
    table = {key: c.convert for key, c in manager.spec_conversions().items()}
    with _lock:
        table.update(_explicit)
    return table


def _resolve(name: str) -> type | None:
    """The class a dotted name refers to, if its modules are imported already (imports nothing)."""
    parts = name.split(".")
    if parts[0] not in sys.modules:
        return None
    for split in range(len(parts) - 1, 0, -1):
        obj: Any = sys.modules.get(".".join(parts[:split]))
        if obj is None:
            continue
        try:
            for attribute in parts[split:]:
                obj = getattr(obj, attribute)
        except AttributeError:
            continue
        return obj if isinstance(obj, type) else None
    return None


def find_spec_conversion(cls: type) -> Converter | None:
    """The conversion :func:`convert_spec` would use for instances of ``cls``, or ``None``.

    Example:
        >>> from hub.registry import find_spec_conversion
        >>> find_spec_conversion(int) is None
        True
    """
    global _cache_key
    manager = ensure_plugins_loaded()
    with _lock:
        key = (id(manager), manager.generation, _generation)
        if key != _cache_key:
            _cache.clear()
            _cache_key = key
        found = _cache.get(cls)
        if found is not None:
            return found
        explicit = dict(_explicit)
    plugins = {name: c.convert for name, c in manager.spec_conversions().items()}
    found = _lookup(cls, [explicit, plugins])
    if found is not None:
        with _lock:
            if _cache_key == key:
                _cache[cls] = found
    return found


def _lookup(cls: type, tables: list[dict[str, Converter]]) -> Converter | None:
    resolved = [
        {klass: convert for name, convert in table.items() if (klass := _resolve(name))}
        for table in tables
    ]
    for klass in cls.__mro__:
        name = dotted_name(klass)
        for table, by_class in zip(tables, resolved):
            if name in table:
                return table[name]
            if klass in by_class:
                return by_class[klass]
    return None


def convert_spec(obj: Any, **kwargs: Any) -> Any:
    """Convert a foreign space or spec (a gymnasium ``Box``, a dm_env ``BoundedArray``...) to a
    hub spec, with the conversion registered for its class or the nearest base class.

    Keyword arguments go to the conversion (``device=``, ``batch_size=``...).

    Raises:
        SpecConversionError: no conversion is registered for the class or its bases; the message
            names the class and says how to register one.

    Example:
        >>> import hub
        >>> try:
        ...     hub.convert_spec(3.5)
        ... except hub.errors.SpecConversionError as err:
        ...     print(str(err).splitlines()[0])
        No spec conversion is registered for builtins.float (nor for a base class of it).
    """
    convert = find_spec_conversion(type(obj))
    if convert is None:
        raise _no_conversion(type(obj))
    return convert(obj, **kwargs)


def _no_conversion(cls: type) -> SpecConversionError:
    name = dotted_name(cls)
    bases = [dotted_name(k) for k in cls.__mro__[1:] if k is not object]
    based = f"its base classes {', '.join(bases)}" if bases else "a base class of it"
    lines = [
        f"No spec conversion is registered for {name} (nor for {based}).",
        "Register one, where convert(obj, **kwargs) returns a hub spec:",
        f'    hub.register_spec_conversion("{name}", convert)',
        "or, in a plugin, return it from the hub_spec_conversions hook:",
        f'    return [hub.SpecConversion("{name}", convert)]',
        "(see docs/plugins.md, 'Spec conversions').",
    ]
    failed = ensure_plugins_loaded().failed_plugins()
    if failed:
        lines.append(
            "These plugins failed to load and may have provided it: "
            + "; ".join(f"{info.name} ({info.error})" for info in failed)
        )
    return SpecConversionError("\n".join(lines))
