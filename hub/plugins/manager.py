"""The plugin manager: finds, loads and isolates hub plugins.

Plugins are the entry points of group ``hub.plugins``. The built-in ones (those of the ``hub``
distribution) load first, then the third-party ones in name order, one at a time. A plugin that
fails to import, whose hooks raise or return the wrong objects, whose names clash with a plugin
loaded before it, or that implements a hook hub does not define is *failed*: hub records the error
in its :class:`PluginInfo`, warns once on stderr (:class:`HubPluginWarning`) and uses nothing from
it. Every other plugin keeps working.

Environment variables, read when the plugins load:

* ``HUB_STRICT_PLUGINS=1``: a failed plugin raises :class:`hub.errors.PluginLoadError`.
* ``HUB_LOAD_PLUGINS=a,b``: load only these third-party plugins (entry-point or distribution
  names; an empty value loads none). Built-in plugins always load.
* ``HUB_DISABLE_PLUGIN_AUTOLOAD=1``: load no third-party plugin at all.

Loading is lazy: nothing is imported before the first call that needs a plugin.

Example:
    >>> from hub.plugins import Namespace, hookimpl, reset_plugin_manager
    >>> class Toy:
    ...     @hookimpl
    ...     def hub_namespaces(self):
    ...         return [Namespace("toy", make=lambda env_id, **kw: None)]
    >>> pm = reset_plugin_manager(entry_points=False)
    >>> pm.register(Toy(), name="toy").namespaces
    ('toy',)
    >>> _ = reset_plugin_manager()
"""

from __future__ import annotations

import difflib
import os
import re
import threading
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from hub.errors import PluginLoadError
from hub.plugins import hookspecs
from hub.plugins.types import (
    BatchingStrategy,
    HubPluginWarning,
    Namespace,
    PluginInfo,
    SpecConversion,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "RESERVED_BATCHING",
    "HubPluginManager",
    "get_plugin_manager",
    "ensure_plugins_loaded",
    "reset_plugin_manager",
]

ENTRY_POINT_GROUP = "hub.plugins"
HOOKS = ("hub_namespaces", "hub_spec_conversions", "hub_backends", "hub_batching")
RESERVED_BATCHING = frozenset({"auto", "serial", "parallel", "native"})
_TRUE = {"1", "true", "yes", "on"}
_WARNED: set[tuple[str, str]] = set()


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _normalize(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


class _PluginFailure(Exception):
    """A plugin broke a rule (raised and caught inside the manager)."""


@dataclass
class _Record:
    name: str
    version: str | None = None
    module: str | None = None
    distribution: str | None = None
    builtin: bool = False
    hooks: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()
    error: str | None = None
    exception: BaseException | None = field(default=None, repr=False)

    def info(self) -> PluginInfo:
        return PluginInfo(
            name=self.name,
            version=self.version,
            module=self.module,
            namespaces=self.namespaces,
            error=self.error,
            builtin=self.builtin,
            hooks=self.hooks,
            distribution=self.distribution,
        )


@dataclass
class _Contributions:
    namespaces: list[Namespace] = field(default_factory=list)
    conversions: list[SpecConversion] = field(default_factory=list)
    backends: list[Any] = field(default_factory=list)
    batching: list[BatchingStrategy] = field(default_factory=list)


class HubPluginManager:
    """Loads plugins and holds what they declared.

    Args:
        entry_points: discover the entry points of group ``hub.plugins``; ``False`` gives an empty
            manager for tests, filled with :meth:`register`.

    Example:
        >>> from hub.plugins.manager import HubPluginManager
        >>> HubPluginManager(entry_points=False).namespace_names()
        []
    """

    def __init__(self, *, entry_points: bool = True) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self._entry_points = entry_points
        self._lock = threading.RLock()
        self._loaded = False
        self._loading = False
        self._records: dict[str, _Record] = {}  # the plugins in use, by name
        self._failed: list[_Record] = []
        self._namespaces: dict[str, tuple[Namespace, str]] = {}
        self._conversions: dict[str, tuple[SpecConversion, str]] = {}
        self._batching: dict[str, tuple[BatchingStrategy, str]] = {}
        self._backends: dict[str, tuple[Any, str]] = {}
        self._listings: dict[str, tuple[str, ...]] = {}
        self.generation = 0  # bumped whenever the declared objects change

    # -- loading ---------------------------------------------------------------------------

    def ensure_loaded(self) -> HubPluginManager:
        """Load the plugins once; under ``HUB_STRICT_PLUGINS=1`` raise if one failed.

        A call made while the plugins are loading (from a plugin's import) returns at once.
        """
        with self._lock:
            if self._loading:
                return self
            if not self._loaded:
                self._loading = True
                try:
                    if self._entry_points:
                        self._load_entry_points()
                    self._loaded = True
                finally:
                    self._loading = False
            if _flag("HUB_STRICT_PLUGINS"):
                self._raise_failures()
            self._warn_failures()
        return self

    def _load_entry_points(self) -> None:
        from importlib.metadata import entry_points

        found = list(entry_points(group=ENTRY_POINT_GROUP))
        builtin = [ep for ep in found if _is_builtin(ep)]
        third_party = [ep for ep in found if not _is_builtin(ep)]
        builtin.sort(key=lambda ep: (ep.name != "hub", ep.name))
        third_party.sort(key=lambda ep: (ep.name, _dist_name(ep) or ""))
        for ep in builtin:
            self._load_entry_point(ep, builtin=True)
        for ep in self._selected(third_party):
            self._load_entry_point(ep, builtin=False)

    def _selected(self, third_party: list[Any]) -> list[Any]:
        if _flag("HUB_DISABLE_PLUGIN_AUTOLOAD"):
            return []
        allow = os.environ.get("HUB_LOAD_PLUGINS")
        if allow is None:
            return third_party
        asked = {_normalize(n.strip()): n.strip() for n in allow.split(",") if n.strip()}
        wanted = set(asked)
        chosen = [
            ep
            for ep in third_party
            if _normalize(ep.name) in wanted or _normalize(_dist_name(ep) or "") in wanted
        ]
        known = {_normalize(ep.name) for ep in third_party} | {
            _normalize(_dist_name(ep) or "") for ep in third_party
        }
        for name in sorted(wanted - known):
            self._fail(
                _Record(name=asked[name]),
                None,
                "HUB_LOAD_PLUGINS names it, but no installed third-party hub plugin has that "
                "entry-point or distribution name",
            )
        return chosen

    def _load_entry_point(self, ep: Any, *, builtin: bool) -> None:
        dist = getattr(ep, "dist", None)
        record = _Record(
            name=ep.name,
            version=getattr(dist, "version", None),
            module=ep.value.split(":")[0].strip(),
            distribution=_dist_name(ep),
            builtin=builtin,
        )
        try:
            plugin = ep.load()
        except (Exception, SystemExit) as exc:
            self._fail(record, exc, f"importing {ep.value!r} failed: {_describe(exc)}")
            return
        self._add(plugin, record)

    # -- registering -----------------------------------------------------------------------

    def register(
        self,
        plugin: Any,
        name: str | None = None,
        *,
        version: str | None = None,
        builtin: bool = False,
        distribution: str | None = None,
    ) -> PluginInfo:
        """Register an in-memory plugin (a module, class or object with ``@hub.hookimpl`` hooks).

        The entry-point plugins load first, so names clash as they would for an installed plugin.
        A failure is recorded and warned, as for an installed plugin (raised under
        ``HUB_STRICT_PLUGINS=1``).

        Returns:
            The plugin's :class:`PluginInfo` (its ``error`` says whether it worked).
        """
        self.ensure_loaded()
        if name is None:
            name = getattr(plugin, "__name__", None) or type(plugin).__name__
        if isinstance(plugin, ModuleType):
            module = plugin.__name__
        else:
            module = getattr(plugin, "__module__", None)
        record = _Record(
            name=name, version=version, module=module, distribution=distribution, builtin=builtin
        )
        with self._lock:
            self._add(plugin, record)
            if record.error is not None and _flag("HUB_STRICT_PLUGINS"):
                raise _load_error(record)
            self._warn_failures()
        return record.info()

    def unregister(self, name: str) -> None:
        """Remove a plugin and everything it declared (backend families stay registered)."""
        with self._lock:
            failed = [r for r in self._failed if r.name == name]
            if name not in self._records and not failed:
                raise KeyError(f"no plugin named {name!r} is registered")
            self._failed = [r for r in self._failed if r.name != name]
            self._records.pop(name, None)
            if self.pm.has_plugin(name):
                self.pm.unregister(name=name)
            for table in (self._namespaces, self._conversions, self._batching, self._backends):
                for key in [k for k, (_, owner) in table.items() if owner == name]:
                    del table[key]
                    self._listings.pop(key, None)
            self.generation += 1

    def _add(self, plugin: Any, record: _Record) -> None:
        with self._lock:
            if record.name in self._records or self.pm.has_plugin(record.name):
                other = self._records.get(record.name)
                where = f" (by {other.distribution or other.module})" if other else ""
                self._fail(
                    record,
                    None,
                    f"a plugin named {record.name!r} is already registered{where}; "
                    "plugin names must be unique",
                )
                return
            try:
                self.pm.register(plugin, name=record.name)
            except Exception as exc:  # pluggy's validation, or the same object twice
                self._fail(record, exc, f"registering failed: {_describe(exc)}")
                return
            try:
                record.hooks = self._check_hooks(plugin)
                found = self._collect(plugin)
                self._check_clashes(found, record.name)
                self._commit(found, record)
            except (Exception, SystemExit) as exc:
                self.pm.unregister(plugin=plugin)
                if isinstance(exc, _PluginFailure):
                    self._fail(record, exc.__cause__ or exc, str(exc))
                else:
                    self._fail(record, exc, _describe(exc))
                return
            self._records[record.name] = record

    def _check_hooks(self, plugin: Any) -> tuple[str, ...]:
        callers = self.pm.get_hookcallers(plugin) or []
        names = sorted(caller.name for caller in callers)
        unknown = [caller.name for caller in callers if not caller.has_spec()]
        if unknown:
            hints = []
            for name in unknown:
                close = difflib.get_close_matches(name, HOOKS, n=1)
                hints.append(f"{name!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
            raise _PluginFailure(
                f"it implements {', '.join(hints)}, which hub does not define; "
                f"the hooks are {', '.join(HOOKS)} (see hub/plugins/hookspecs.py)"
            )
        if not names:
            raise _PluginFailure(
                "it has no hook implementation: mark its hooks with @hub.hookimpl "
                f"(the hooks are {', '.join(HOOKS)})"
            )
        return tuple(names)

    def _collect(self, plugin: Any) -> _Contributions:
        found = _Contributions()
        wanted = {
            "hub_namespaces": (found.namespaces, Namespace),
            "hub_spec_conversions": (found.conversions, SpecConversion),
            "hub_batching": (found.batching, BatchingStrategy),
            "hub_backends": (found.backends, None),
        }
        for caller in self.pm.get_hookcallers(plugin) or []:
            for impl in caller.get_hookimpls():
                if impl.plugin is not plugin:
                    continue
                target, cls = wanted[caller.name]
                cls = cls or _backend_family_class()
                try:
                    result = impl.function()
                except (Exception, SystemExit) as exc:
                    raise _PluginFailure(f"its hook {caller.name} raised {_describe(exc)}") from exc
                target.extend(_results(caller.name, result, cls))
        return found

    def _check_clashes(self, found: _Contributions, name: str) -> None:
        checks = [
            ("namespace", [ns.name for ns in found.namespaces], self._namespaces),
            ("spec conversion for", [c.type_name for c in found.conversions], self._conversions),
            ("batching strategy", [b.name for b in found.batching], self._batching),
            ("backend family", [f.name for f in found.backends], self._backends),
        ]
        for kind, keys, table in checks:
            seen: set[str] = set()
            for key in keys:
                if key in seen:
                    raise _PluginFailure(f"it declares the {kind} {key!r} twice")
                seen.add(key)
                if key in table:
                    raise _PluginFailure(
                        f"the {kind} {key!r} is already declared by plugin {table[key][1]!r}"
                    )
        for strategy in found.batching:
            if strategy.name in RESERVED_BATCHING:
                raise _PluginFailure(
                    f"the batching strategy name {strategy.name!r} is reserved by hub "
                    f"({', '.join(sorted(RESERVED_BATCHING))}); choose another name"
                )

    def _commit(self, found: _Contributions, record: _Record) -> None:
        if found.backends:
            from hub.dispatch import register_backend_family

            for family in found.backends:
                register_backend_family(family)
        for ns in found.namespaces:
            self._namespaces[ns.name] = (ns, record.name)
        for conversion in found.conversions:
            self._conversions[conversion.type_name] = (conversion, record.name)
        for strategy in found.batching:
            self._batching[strategy.name] = (strategy, record.name)
        for family in found.backends:
            self._backends[family.name] = (family, record.name)
        record.namespaces = tuple(ns.name for ns in found.namespaces)
        self.generation += 1

    # -- failures --------------------------------------------------------------------------

    def _fail(self, record: _Record, exc: BaseException | None, message: str) -> None:
        record.error = message
        record.exception = exc
        record.hooks = ()
        record.namespaces = ()
        self._failed.append(record)

    def _failures(self) -> list[_Record]:
        return list(self._failed)

    def _warn_failures(self) -> None:
        for record in self._failures():
            _warn_once(
                record.name,
                record.error or "",
                f"hub plugin {_label(record)} failed and is skipped: {record.error}. "
                "`hub plugins` lists plugins and their errors; set HUB_STRICT_PLUGINS=1 "
                "to raise instead.",
            )

    def _raise_failures(self) -> None:
        failures = self._failures()
        if failures:
            raise _load_error(failures[0], others=failures[1:])

    # -- queries ---------------------------------------------------------------------------

    def plugins(self) -> list[PluginInfo]:
        """Every plugin, built-ins first, then by name; failed ones carry their ``error``."""
        self.ensure_loaded()
        with self._lock:
            records = [*self._records.values(), *self._failed]
        records.sort(key=lambda r: (not r.builtin, r.name != "hub", r.name))
        return [r.info() for r in records]

    def failed_plugins(self) -> list[PluginInfo]:
        """The plugins that failed to load, with their errors."""
        return [info for info in self.plugins() if info.error is not None]

    def namespace(self, name: str) -> Namespace | None:
        """The namespace called ``name``, or ``None``."""
        self.ensure_loaded()
        entry = self._namespaces.get(name)
        return entry[0] if entry else None

    def namespace_names(self) -> list[str]:
        """The names of all namespaces, sorted."""
        self.ensure_loaded()
        return sorted(self._namespaces)

    def namespace_plugin(self, name: str) -> PluginInfo | None:
        """The plugin that serves the namespace ``name``."""
        self.ensure_loaded()
        entry = self._namespaces.get(name)
        return self._records[entry[1]].info() if entry else None

    def spec_conversions(self) -> dict[str, SpecConversion]:
        """The spec conversions declared by plugins, keyed by dotted type name."""
        self.ensure_loaded()
        return {key: conversion for key, (conversion, _) in self._conversions.items()}

    def batching_strategies(self) -> dict[str, BatchingStrategy]:
        """The batching strategies declared by plugins, by name."""
        self.ensure_loaded()
        return {key: strategy for key, (strategy, _) in self._batching.items()}

    def backend_families(self) -> dict[str, Any]:
        """The backend families declared by plugins, by name."""
        self.ensure_loaded()
        return {key: family for key, (family, _) in self._backends.items()}

    def env_ids(self, name: str, *, refresh: bool = False) -> tuple[str, ...]:
        """The bare ids the namespace ``name`` lists, cached (``refresh=True`` asks again).

        Raises whatever the namespace's ``list_envs`` raises; ``()`` when it cannot list.
        """
        with self._lock:
            if not refresh and name in self._listings:
                return self._listings[name]
        ns = self.namespace(name)
        if ns is None or ns.list_envs is None:
            return ()
        ids = tuple(sorted({str(env_id) for env_id in ns.list_envs()}))
        with self._lock:
            self._listings[name] = ids
        return ids


def _results(hook: str, result: Any, cls: type) -> list[Any]:
    if result is None:
        return []
    if not isinstance(result, (list, tuple)):
        raise _PluginFailure(
            f"its hook {hook} must return a list of {cls.__name__} objects, "
            f"got {type(result).__name__}"
        )
    for item in result:
        if not isinstance(item, cls):
            raise _PluginFailure(
                f"its hook {hook} must return a list of hub.{cls.__name__} objects, "
                f"got an item {item!r}"
            )
    return list(result)


def _backend_family_class() -> type:
    from hub.dispatch import BackendFamily

    return BackendFamily


def _dist_name(ep: Any) -> str | None:
    dist = getattr(ep, "dist", None)
    return getattr(dist, "name", None) if dist is not None else None


def _is_builtin(ep: Any) -> bool:
    return _normalize(_dist_name(ep) or "") == "hub"


def _label(record: _Record) -> str:
    if record.distribution:
        return f"{record.name!r} ({record.distribution} {record.version or '?'})"
    return repr(record.name)


def _load_error(record: _Record, others: list[_Record] = ()) -> PluginLoadError:
    message = f"hub plugin {_label(record)} failed to load: {record.error}"
    if others:
        message += "; also failed: " + ", ".join(f"{_label(r)}: {r.error}" for r in others)
    error = PluginLoadError(message)
    error.__cause__ = record.exception
    return error


def _warn_once(name: str, error: str, message: str) -> None:
    """Warn about a failed plugin once per process, located at the plugin, not in hub's code."""
    if (name, error) in _WARNED:
        return
    _WARNED.add((name, error))
    warnings.warn_explicit(
        message, HubPluginWarning, filename=f"<hub plugin {name}>", lineno=0, module="hub.plugins"
    )


_manager: HubPluginManager | None = None
_manager_lock = threading.Lock()


def get_plugin_manager() -> HubPluginManager:
    """The process-wide plugin manager (created on first use; plugins load on first need).

    Example:
        >>> from hub.plugins import get_plugin_manager
        >>> get_plugin_manager() is get_plugin_manager()
        True
    """
    global _manager
    with _manager_lock:
        if _manager is None:
            _manager = HubPluginManager()
        return _manager


def ensure_plugins_loaded() -> HubPluginManager:
    """Load the plugins if they are not loaded yet, and return the manager.

    Example:
        >>> from hub.plugins import ensure_plugins_loaded
        >>> "hub" in ensure_plugins_loaded().namespace_names()
        True
    """
    return get_plugin_manager().ensure_loaded()


def reset_plugin_manager(*, entry_points: bool = True) -> HubPluginManager:
    """Replace the process-wide manager with a fresh one, for tests.

    Args:
        entry_points: ``False`` gives a manager with no plugin at all, to be filled with
            :meth:`HubPluginManager.register`.

    Example:
        >>> from hub.plugins import reset_plugin_manager
        >>> reset_plugin_manager(entry_points=False).namespace_names()
        []
        >>> _ = reset_plugin_manager()
    """
    global _manager
    with _manager_lock:
        _manager = HubPluginManager(entry_points=entry_points)
        return _manager
