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
    ... def box_to_spec(space, **kwargs):
    ...     return hub.specs.Unbounded(shape=(space.n,))
    >>> hub.convert_spec(Box(3)).shape
    torch.Size([3])
    >>> hub.registry.unregister_spec_conversion(f"{__name__}.Box")
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Callable
from typing import Any

from hub.errors import PluginError, SpecConversionError
from hub.plugins import PluginInfo, SpecConversion, ensure_plugins_loaded
from hub.plugins.manager import plugin_origin
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
_cache: weakref.WeakKeyDictionary[type, tuple[Converter, str]] = weakref.WeakKeyDictionary()
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
    found = _find(cls)
    return found[0] if found is not None else None


def _find(cls: type) -> tuple[Converter, str] | None:
    """The conversion for ``cls`` and who declared it (for messages)."""
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
    by_class, by_name = _plugin_tables(manager)
    key = (id(manager), manager.generation, _generation)  # settling conflicts may change it
    found = _lookup(cls, explicit, by_class, by_name)
    if found is not None:
        with _lock:
            if _cache_key == key:
                _cache[cls] = found
    return found


_Entry = tuple[Converter, str]


def _plugin_tables(manager: Any) -> tuple[dict[type, _Entry], dict[str, _Entry]]:
    """The plugins' conversions keyed by the class they resolve to (those whose module is
    imported) and, for the others, by dotted name.

    Two conversions that resolve to the same class are a conflict unless the later one says
    ``override=True``: the plugin that declared the later one is failed (it is reported, never
    silently preferred) and the tables are built again without it.
    """
    while True:
        by_class: dict[type, tuple[SpecConversion, PluginInfo]] = {}
        by_name: dict[str, _Entry] = {}
        conflict = None
        for conversion, owner in manager.spec_conversion_entries():
            klass = _resolve(conversion.type_name)
            if klass is None:
                by_name[conversion.type_name] = (conversion.convert, _owner(owner))
                continue
            held = by_class.get(klass)
            if held is None or (conversion.override and held[1].name != owner.name):
                by_class[klass] = (conversion, owner)
            elif held[1].name != owner.name:
                conflict = (conversion, owner, held, klass)
                break
        if conflict is None:
            return {k: (c.convert, _owner(o)) for k, (c, o) in by_class.items()}, by_name
        conversion, owner, (held, holder), klass = conflict
        manager.fail_plugin(
            owner.name,
            f"its spec conversion {conversion.type_name!r} is for the class {dotted_name(klass)}, "
            f"which plugin {holder.name!r} converts already ({held.type_name!r}); declare it "
            "with hub.SpecConversion(..., override=True) to replace that one on purpose (see "
            "docs/plugins.md, 'Conflicts and diagnostics')",
        )


def _owner(info: PluginInfo) -> str:
    return f"plugin {info.name!r} ({plugin_origin(info)})"


def _lookup(
    cls: type,
    explicit: dict[str, Converter],
    by_class: dict[type, _Entry],
    by_name: dict[str, _Entry],
) -> _Entry | None:
    explicit_by_class = {klass: c for name, c in explicit.items() if (klass := _resolve(name))}
    for klass in cls.__mro__:
        name = dotted_name(klass)
        if name in explicit:
            return explicit[name], f"hub.register_spec_conversion({name!r})"
        if klass in explicit_by_class:
            return explicit_by_class[klass], f"hub.register_spec_conversion for {name}"
        found = by_class.get(klass) or by_name.get(name)
        if found is not None:
            return found
    return None


def convert_spec(obj: Any, **kwargs: Any) -> Any:
    """Convert a foreign space or spec (a gymnasium ``Box``, a dm_env ``BoundedArray``...) to a
    hub spec, with the conversion registered for its class or the nearest base class.

    Keyword arguments go to the conversion (``device=``, ``batch_size=``...).

    Raises:
        SpecConversionError: no conversion is registered for the class or its bases; the message
            names the class and says how to register one.
        PluginError: the conversion returned something that is not a hub spec; the message
            names the plugin (or the registration) it came from.

    Example:
        >>> import hub
        >>> try:
        ...     hub.convert_spec(3.5)
        ... except hub.errors.SpecConversionError as err:
        ...     print(str(err).splitlines()[0])
        No spec conversion is registered for builtins.float (nor for a base class of it).
    """
    found = _find(type(obj))
    if found is None:
        raise _no_conversion(type(obj))
    convert, owner = found
    spec = convert(obj, **kwargs)
    from hub.specs import TensorSpec  # torch: only once something is converted

    if not isinstance(spec, TensorSpec):
        raise PluginError(
            f"The spec conversion for {dotted_name(type(obj))} returned "
            f"{type(spec).__name__} ({_short(spec)}), not a hub spec; this is a fault of "
            f"{owner}: a conversion must return a hub spec such as hub.specs.Bounded."
        )
    return spec


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


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
