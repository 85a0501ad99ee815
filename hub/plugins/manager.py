"""The plugin manager: finds, loads and isolates hub plugins.

Plugins are the entry points of group ``hub.plugins``. The built-in ones (those of the ``hub``
distribution) load first, then the third-party ones in name order, one at a time. A plugin that
fails to import, whose hooks raise or return the wrong objects, whose names clash with a plugin
loaded before it, or that implements a hook hub does not define is *failed*: hub records the error
in its :class:`PluginInfo`, warns once on stderr (:class:`HubPluginWarning`) and uses nothing from
it. Every other plugin keeps working.

Whatever a third-party plugin raises while it loads fails that plugin only, ``KeyboardInterrupt``
and other ``BaseException`` subclasses included (its code runs in its own thread, where no
signal arrives: the user's Ctrl-C still stops hub, see ``_plugin_raised``).

A third-party plugin has a deadline: its import and its hooks must finish within
``HUB_PLUGIN_LOAD_TIMEOUT`` seconds (default 30), or it is failed with its name and where it was
stuck, and hub goes on without it; what it does after the deadline is never registered. One that
takes more than half a second is warned about (every process that uses hub waits for it).

Two plugins that declare the same namespace are settled by name, never by load order: the
plugin whose entry-point name or distribution name (``NS``, ``hub-NS`` or ``hub-plugin-NS``)
matches the namespace keeps it and the other fails; when neither (or both) match, both fail and
nobody serves the namespace. A built-in plugin always keeps its namespaces.

Environment variables, read when the plugins load:

* ``HUB_STRICT_PLUGINS=1``: a failed plugin raises :class:`hub.errors.PluginLoadError`.
* ``HUB_LOAD_PLUGINS=a,b``: load only these third-party plugins (entry-point or distribution
  names; an empty value loads none). Built-in plugins always load.
* ``HUB_DISABLE_PLUGIN_AUTOLOAD=1``: load no third-party plugin at all.
* ``HUB_PLUGIN_LOAD_TIMEOUT=S``: the deadline of each third-party plugin, in seconds (default
  30; ``0`` waits forever).

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

import contextlib
import difflib
import os
import re
import threading
import time
import traceback
import warnings
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import pluggy

from hub.errors import PluginError, PluginLoadError
from hub.plugins import hookspecs
from hub.plugins.deadline import call_with_deadline, in_loader_thread
from hub.plugins.types import (
    BatchingStrategy,
    HubPluginWarning,
    Namespace,
    PluginInfo,
    SpecConversion,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "LOAD_TIMEOUT_VAR",
    "DEFAULT_LOAD_TIMEOUT",
    "SLOW_LOAD_SECONDS",
    "RESERVED_BATCHING",
    "load_timeout",
    "plugin_origin",
    "HubPluginManager",
    "get_plugin_manager",
    "ensure_plugins_loaded",
    "reset_plugin_manager",
]

ENTRY_POINT_GROUP = "hub.plugins"
HOOKS = ("hub_namespaces", "hub_spec_conversions", "hub_backends", "hub_batching")
RESERVED_BATCHING = frozenset({"auto", "serial", "parallel", "native"})
LOAD_TIMEOUT_VAR = "HUB_PLUGIN_LOAD_TIMEOUT"
DEFAULT_LOAD_TIMEOUT = 30.0
SLOW_LOAD_SECONDS = 0.5
POLICY = "see docs/plugins.md, 'Conflicts and diagnostics'"
_TRUE = {"1", "true", "yes", "on"}
_WARNED: set[tuple[str, str]] = set()


def _flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in _TRUE


def _normalize(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def _describe(exc: BaseException) -> str:
    said = str(exc)
    return f"{type(exc).__name__}: {said}" if said else type(exc).__name__


def load_timeout() -> float | None:
    """The deadline of a third-party plugin's load, from ``HUB_PLUGIN_LOAD_TIMEOUT`` (seconds);
    ``None`` means no deadline (the value ``0``). A value that is not a number is warned about
    and the default (30 s) is used.

    Example:
        >>> import os
        >>> load_timeout() == float(os.environ.get("HUB_PLUGIN_LOAD_TIMEOUT", 30)) or None
        True
    """
    raw = os.environ.get(LOAD_TIMEOUT_VAR, "").strip()
    if not raw:
        return DEFAULT_LOAD_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        _warn_once(
            LOAD_TIMEOUT_VAR,
            raw,
            f"{LOAD_TIMEOUT_VAR}={raw!r} is not a number of seconds >= 0 (0: no deadline); "
            f"using {DEFAULT_LOAD_TIMEOUT:g} s.",
        )
        return DEFAULT_LOAD_TIMEOUT
    return value or None


class _PluginFailure(Exception):
    """A plugin broke a rule (raised and caught inside the manager)."""

    trace: str | None = None  # the traceback (or stuck stack) to show with --verbose


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
    load_time: float | None = None
    traceback: str | None = None
    overrides: tuple[str, ...] = ()
    claimed: tuple[str, ...] = ()

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
            load_time=self.load_time,
            traceback=self.traceback,
            overrides=self.overrides,
            claimed=self.claimed,
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
        self._contested: dict[str, list[str]] = {}  # namespace -> plugins that lost it together
        self._timeout: float | None = None
        self.generation = 0  # bumped whenever the declared objects change

    # -- loading ---------------------------------------------------------------------------

    def _reading(self) -> Any:
        """The lock, or nothing for a plugin's code running in its loader thread: the loading
        thread holds the lock while it waits for that code, so taking it would deadlock (and
        the tables do not change meanwhile)."""
        return contextlib.nullcontext() if in_loader_thread() else self._lock

    def ensure_loaded(self) -> HubPluginManager:
        """Load the plugins once; under ``HUB_STRICT_PLUGINS=1`` raise if one failed.

        A call made while the plugins are loading (from a plugin's import) returns at once.
        """
        if in_loader_thread():  # a plugin asks while it loads: answer with what is there
            return self
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
        self._timeout = load_timeout()
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
        start = time.perf_counter()
        timeout = None if builtin else self._timeout  # hub's own plugins are trusted
        # a third-party plugin runs in its own thread even without a deadline, so that whatever
        # it raises (KeyboardInterrupt too) is told apart from the user's Ctrl-C (_plugin_raised)
        loaded = call_with_deadline(ep.load, timeout, ep.name, thread=not builtin)
        if loaded.timed_out:
            self._fail(
                record,
                None,
                f"importing {ep.value!r} did not finish within {timeout:g} s "
                f"({LOAD_TIMEOUT_VAR}): it hangs or is far too slow at import; "
                "`hub plugins --verbose` shows where it was stuck",
                traceback=loaded.traceback,
            )
        elif loaded.error is not None:
            if not _plugin_raised(loaded.error, in_thread=not builtin):
                raise loaded.error
            self._fail(
                record,
                loaded.error,
                f"importing {ep.value!r} failed: {_describe(loaded.error)}",
                traceback=loaded.traceback,
            )
        else:
            self._add(loaded.value, record, timeout=timeout, start=start, thread=not builtin)
        record.load_time = time.perf_counter() - start
        if not builtin and record.error is None and record.load_time > SLOW_LOAD_SECONDS:
            _warn_once(
                record.name,
                "slow",
                f"hub plugin {_label(record)} took {record.load_time:.1f} s to load; every "
                "hub call that needs plugins waits for it. A plugin should import its backend "
                "only when an env is built or listed (docs/plugins.md).",
            )

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
            start = time.perf_counter()
            self._add(plugin, record)
            record.load_time = time.perf_counter() - start
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

    def _add(
        self,
        plugin: Any,
        record: _Record,
        *,
        timeout: float | None = None,
        start: float | None = None,
        thread: bool = False,
    ) -> None:
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
                found = self._collect(plugin, record, timeout, start, thread)
                record.claimed = tuple(ns.name for ns in found.namespaces)
                self._check_clashes(found, record.name)
                self._settle_namespaces(found, record)
                self._commit(found, record)
            except (Exception, SystemExit) as exc:
                self.pm.unregister(plugin=plugin)
                cause = exc.__cause__ if isinstance(exc, _PluginFailure) else exc
                message = str(exc) if isinstance(exc, _PluginFailure) else _describe(exc)
                trace = getattr(exc, "trace", None)
                if trace is None and cause is not None and cause is not exc:
                    trace = "".join(traceback.format_exception(cause))
                self._fail(record, cause or exc, message, traceback=trace)
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

    def _collect(
        self,
        plugin: Any,
        record: _Record,
        timeout: float | None,
        start: float | None,
        thread: bool = False,
    ) -> _Contributions:
        """Call the plugin's hooks (within what is left of its deadline) and check the results."""
        hooks = [
            (caller.name, impl.function)
            for caller in self.pm.get_hookcallers(plugin) or []
            for impl in caller.get_hookimpls()
            if impl.plugin is plugin
        ]
        current = ["?"]

        def call_all() -> list[tuple[str, Any]]:
            results = []
            for name, function in hooks:
                current[0] = name
                results.append((name, function()))
            return results

        if timeout is not None and start is not None:
            timeout = max(timeout - (time.perf_counter() - start), 0.001)
        called = call_with_deadline(call_all, timeout, record.name, thread=thread)
        if called.timed_out:
            failure = _PluginFailure(
                f"its hook {current[0]} did not return within the load deadline "
                f"({LOAD_TIMEOUT_VAR}): it hangs or is far too slow; `hub plugins --verbose` "
                "shows where it was stuck"
            )
            failure.trace = called.traceback
            raise failure
        if called.error is not None:
            if not _plugin_raised(called.error, in_thread=thread):
                raise called.error
            failure = _PluginFailure(f"its hook {current[0]} raised {_describe(called.error)}")
            failure.trace = called.traceback
            raise failure from called.error
        found = _Contributions()
        wanted = {
            "hub_namespaces": (found.namespaces, Namespace),
            "hub_spec_conversions": (found.conversions, SpecConversion),
            "hub_batching": (found.batching, BatchingStrategy),
            "hub_backends": (found.backends, None),
        }
        for name, result in called.value:
            target, cls = wanted[name]
            target.extend(_results(name, result, cls or _backend_family_class()))
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
                if table is self._namespaces:
                    continue  # settled by _settle_namespaces
                if table is self._conversions and _overrides(found, key):
                    continue
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

    def _settle_namespaces(self, found: _Contributions, record: _Record) -> None:
        """Apply the conflict policy to the namespaces ``record`` declares that another plugin
        holds (or lost): the plugin whose name matches the namespace keeps it; if neither or
        both match, both fail. Raises :class:`_PluginFailure` when ``record`` loses."""
        evict: dict[str, str] = {}
        lost: list[str] = []
        for ns in found.namespaces:
            name = ns.name
            if name in self._contested:
                others = ", ".join(repr(n) for n in self._contested[name])
                self._contested[name].append(record.name)
                lost.append(
                    f"the namespace {name!r} is declared by several plugins ({others} and this "
                    f"one) and none of them owns it by name, so none serves it ({POLICY})"
                )
                continue
            if name not in self._namespaces:
                continue
            holder = self._records[self._namespaces[name][1]]
            mine, theirs = _ownership(record, name), _ownership(holder, name)
            if holder.builtin != record.builtin:  # hub's own plugins keep their namespaces
                mine, theirs = (mine, None) if record.builtin else (None, theirs)
            if theirs and not mine:
                lost.append(
                    f"the namespace {name!r} belongs to plugin {_label(holder)}, whose {theirs} "
                    f"matches it ({POLICY})"
                )
            elif mine and not theirs:
                evict[holder.name] = (
                    f"it declares the namespace {name!r}, which belongs to plugin "
                    f"{_label(record)}, whose {mine} matches it ({POLICY})"
                )
            else:
                why = "both own it by name" if mine else "neither owns it by name"
                self._contested[name] = [holder.name, record.name]
                evict[holder.name] = (
                    f"it and plugin {_label(record)} both declare the namespace {name!r} and "
                    f"{why}, so neither serves it ({POLICY})"
                )
                lost.append(
                    f"it and plugin {_label(holder)} both declare the namespace {name!r} and "
                    f"{why}, so neither serves it ({POLICY})"
                )
        for name, why in evict.items():
            self._evict(name, why)
        if lost:
            raise _PluginFailure("; ".join(lost))

    def _evict(self, name: str, message: str) -> None:
        """Fail a plugin that was in use: everything it declared goes."""
        record = self._records.get(name)
        if record is None:
            return
        hooks, claimed, load_time = record.hooks, record.claimed, record.load_time
        self.unregister(name)
        self._fail(record, None, message)
        record.claimed, record.load_time = claimed, load_time
        record.hooks = hooks

    def fail_plugin(self, name: str, message: str) -> None:
        """Mark the plugin ``name`` failed because of a fault found after it loaded (a spec
        conversion that clashes with another plugin's once both are resolved): everything it
        declared goes, it is warned about, and under ``HUB_STRICT_PLUGINS=1`` this raises
        :class:`hub.errors.PluginLoadError`.

        Example:
            >>> from hub.plugins import HubPluginManager
            >>> HubPluginManager(entry_points=False).fail_plugin("nobody", "why")  # no such plugin
        """
        with self._lock:
            record = self._records.get(name)
            if record is None:
                return
            self._evict(name, message)
            if _flag("HUB_STRICT_PLUGINS"):
                raise _load_error(record)
            self._warn_failures()

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
        record.overrides = tuple(c.type_name for c in found.conversions if c.override)
        self.generation += 1

    # -- failures --------------------------------------------------------------------------

    def _fail(
        self,
        record: _Record,
        exc: BaseException | None,
        message: str,
        *,
        traceback: str | None = None,
    ) -> None:
        record.error = message
        record.exception = exc
        record.traceback = traceback
        record.hooks = ()
        record.namespaces = ()
        record.overrides = ()
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
        with self._reading():
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

    def spec_conversion_entries(self) -> list[tuple[SpecConversion, PluginInfo]]:
        """Every spec conversion with the plugin that declared it, in load order (built-ins
        first)."""
        self.ensure_loaded()
        with self._reading():
            entries = list(self._conversions.values())
            return [(conversion, self._records[owner].info()) for conversion, owner in entries]

    def spec_conversions(self) -> dict[str, SpecConversion]:
        """The spec conversions declared by plugins, keyed by dotted type name."""
        self.ensure_loaded()
        return {key: conversion for key, (conversion, _) in self._conversions.items()}

    def batching_plugin(self, name: str) -> PluginInfo | None:
        """The plugin that declares the batching strategy ``name``."""
        self.ensure_loaded()
        entry = self._batching.get(name)
        return self._records[entry[1]].info() if entry else None

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

        Raises:
            PluginError: the namespace's ``list_envs`` raised; the message names the plugin
                (the plugin's exception is the ``__cause__``).
        """
        with self._reading():
            if not refresh and name in self._listings:
                return self._listings[name]
        ns = self.namespace(name)
        if ns is None or ns.list_envs is None:
            return ()
        try:
            ids = tuple(sorted({str(env_id) for env_id in ns.list_envs()}))
        except Exception as exc:
            owner = self.namespace_plugin(name)
            label = f"plugin {owner.name!r}" if owner is not None else "its plugin"
            error = PluginError(
                f"Listing the envs of namespace {name!r} failed in {label} "
                f"({plugin_origin(owner)}): {_describe(exc)}. This is a fault of the plugin; "
                "report it to its authors (`hub plugins` shows its version)."
            )
            error.plugin = owner.name if owner is not None else None
            raise error from exc
        with self._reading():
            self._listings[name] = ids
        return ids


def _plugin_raised(error: BaseException, *, in_thread: bool) -> bool:
    """Whether ``error``, raised while a plugin's code ran, is the plugin's fault (it fails)
    rather than something to pass on (raised again).

    A third-party plugin runs in its loader thread, and every exception raised there is its
    own: a signal such as the user's Ctrl-C goes to the main thread, which gets it while it
    waits. So a ``KeyboardInterrupt``, a ``GeneratorExit`` or any other ``BaseException`` the
    plugin raises fails the plugin, never every ``make_env`` and CLI command. Code that runs in
    the calling thread (hub's own plugins, in-memory plugins) cannot be told apart from a
    Ctrl-C there: only an ``Exception`` or a ``SystemExit`` (a plugin calling ``sys.exit``) fails
    the plugin, and a ``KeyboardInterrupt`` stops the program as the user asked.
    """
    return in_thread or isinstance(error, Exception | SystemExit)


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


def _overrides(found: _Contributions, key: str) -> bool:
    return any(c.override for c in found.conversions if c.type_name == key)


def _ownership(record: _Record, namespace: str) -> str | None:
    """Why ``record`` owns ``namespace`` by name ("entry-point name", ...), or ``None``."""
    if record.builtin:
        return "built-in plugin"
    wanted = _normalize(namespace)
    if _normalize(record.name) == wanted:
        return "entry-point name"
    dist = _normalize(record.distribution or "")
    if dist in (wanted, f"hub-{wanted}", f"hub-plugin-{wanted}"):
        return "distribution name"
    return None


def plugin_origin(info: PluginInfo | None) -> str:
    """Where a plugin comes from, for messages: ``"hub-plugin-zoo 0.3, module zoo.plugin"``.

    Example:
        >>> from hub.plugins import PluginInfo
        >>> plugin_origin(PluginInfo("zoo", "0.3", "zoo.plugin", distribution="hub-plugin-zoo"))
        'hub-plugin-zoo 0.3, module zoo.plugin'
    """
    if info is None:
        return "unknown plugin"
    parts = []
    if info.distribution:
        parts.append(f"{info.distribution} {info.version or '?'}")
    if info.module:
        parts.append(f"module {info.module}")
    return ", ".join(parts) or "registered in memory"


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
