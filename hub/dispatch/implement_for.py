"""Version dispatch: one function, several implementations, chosen by backend and version.

``@implement_for("gymnasium", "1.0")`` marks an implementation for gymnasium 1.0 and later
(``from_version`` inclusive, ``to_version`` exclusive, PEP 440 order). The decorator returns a
:class:`VersionDispatcher`; further implementations join it either by defining a function with
the same name in the same scope and decorating it too, or through ``.register(...)``.

A call picks the implementation whose module is active (for modules of a backend family, see
:mod:`hub.dispatch.backends`) or installed (for any other module) and whose range holds the
installed version. The choice is made once per backend state and cached: afterwards a call costs
one ``ContextVar.get`` and one dict lookup on top of the call itself.

Example:
    >>> from hub.dispatch import implement_for
    >>> @implement_for("packaging", None, "20")
    ... def flavour():
    ...     return "old packaging"
    >>> @flavour.register(from_version="20")
    ... def _():
    ...     return "packaging 20 or later"
    >>> flavour()
    'packaging 20 or later'
    >>> [impl.range for impl in flavour.implementations]
    ['<20', '>=20']
"""

from __future__ import annotations

import functools
import importlib
import threading
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from types import FunctionType, MethodType
from typing import Any, NamedTuple

from packaging.version import Version

from hub.dispatch import backends, versions
from hub.dispatch.versions import VersionRangeError
from hub.errors import ImplementationConflictError, NoImplementationError

__all__ = ["Implementation", "VersionDispatcher", "implement_for", "registered_dispatchers"]

_current_state = backends._ACTIVE.get

# (module, qualname) -> dispatcher, for merging same-named definitions (TorchRL style)
_by_name: weakref.WeakValueDictionary[tuple[str, str], VersionDispatcher] = (
    weakref.WeakValueDictionary()
)
_all: weakref.WeakSet[VersionDispatcher] = weakref.WeakSet()
_name_lock = threading.Lock()


def _invalidate_all() -> None:
    for dispatcher in list(_all):
        dispatcher._cache = {}


versions._on_change.append(_invalidate_all)


class Implementation(NamedTuple):
    """One implementation of a dispatched function: ``(module, range, function)``.

    Example:
        >>> Implementation("gym", ">=0.26,<1.0", print).range
        '>=0.26,<1.0'
    """

    module: str
    range: str
    function: Callable[..., Any]


@dataclass(frozen=True, eq=False)
class _Impl:
    module: str
    lower: Version | None
    upper: Version | None
    lower_text: str | None
    upper_text: str | None
    function: Callable[..., Any]
    location: tuple[str, int] | None

    @property
    def top(self) -> str:
        return versions.top_level(self.module)

    @property
    def range(self) -> str:
        parts = []
        if self.lower_text is not None:
            parts.append(f">={self.lower_text}")
        if self.upper_text is not None:
            parts.append(f"<{self.upper_text}")
        return ",".join(parts) or "any version"

    @property
    def label(self) -> str:
        """``gym >=0.26,<1.0``, or ``gym, any version``."""
        return f"{self.module}, any version" if self.open else f"{self.module} {self.range}"

    @property
    def open(self) -> bool:
        return self.lower is None and self.upper is None

    @property
    def where(self) -> str:
        return f"{self.location[0]}:{self.location[1]}" if self.location else "<unknown place>"

    def contains(self, version: Version) -> bool:
        return (self.lower is None or version >= self.lower) and (
            self.upper is None or version < self.upper
        )

    def overlaps(self, other: _Impl) -> bool:
        lows = [v for v in (self.lower, other.lower) if v is not None]
        highs = [v for v in (self.upper, other.upper) if v is not None]
        return not lows or not highs or max(lows) < min(highs)


def _make_impl(
    module_name: str, from_version: str | None, to_version: str | None, function: Callable
) -> _Impl:
    if not isinstance(module_name, str) or not all(
        p.isidentifier() for p in module_name.split(".")
    ):
        example = module_name if isinstance(module_name, str) else "0.26"
        raise VersionRangeError(
            f"{module_name!r} is not a module name. implement_for and .register take "
            "(module_name, from_version, to_version); to give only versions, pass them by "
            f"keyword: .register(from_version={example!r})."
        )
    if isinstance(from_version, float) or isinstance(to_version, float):
        raise VersionRangeError(
            f"versions are strings: write '{from_version}' and '{to_version}' in quotes, since a "
            "float loses digits (1.10 becomes 1.1)."
        )
    lower = None if from_version is None else versions.parse_version(str(from_version))
    upper = None if to_version is None else versions.parse_version(str(to_version))
    if lower is not None and upper is not None and lower >= upper:
        raise VersionRangeError(
            f"the range from_version={from_version!r} (inclusive) to to_version={to_version!r} "
            f"(exclusive) of {module_name!r} holds no version: from_version must be lower."
        )
    inner, seen = function, 0
    while hasattr(inner, "__wrapped__") and seen < 100:  # what functools.wraps wrapped
        inner, seen = inner.__wrapped__, seen + 1
    code = getattr(inner, "__code__", None)
    location = (code.co_filename, code.co_firstlineno) if code is not None else None
    return _Impl(
        module_name,
        lower,
        upper,
        None if from_version is None else str(from_version),
        None if to_version is None else str(to_version),
        function,
        location,
    )


def _unwrap(fn: Any) -> tuple[Callable[..., Any], str]:
    """The plain function and its kind: "function", "classmethod" or "staticmethod"."""
    if isinstance(fn, classmethod):
        return fn.__func__, "classmethod"
    if isinstance(fn, staticmethod):
        return fn.__func__, "staticmethod"
    if not callable(fn):
        raise TypeError(f"implement_for decorates a function or method, got {fn!r}.")
    return fn, "function"


def _load_dispatcher(module: str, qualname: str) -> Any:
    """Find an object by module and qualified name without binding methods (for unpickling)."""
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        namespace = vars(obj) if isinstance(obj, type) else {}
        obj = namespace[part] if part in namespace else getattr(obj, part)
        if isinstance(obj, (classmethod, staticmethod, MethodType)):
            obj = obj.__func__
        if isinstance(obj, FunctionType):  # a dispatched method stands in a class as a function
            obj = getattr(obj, "__dispatcher__", obj)
    return obj


def _set_call(family: str, module: str) -> str:
    if family == "gym":
        return f'hub.set_gym_backend("{module}")'
    return f'hub.set_backend("{family}", "{module}")'


@dataclass
class _Row:
    """What dispatch sees for one module that has implementations (or is an active backend)."""

    top: str
    impls: list[_Impl]
    family: backends.BackendFamily | None
    active: str | None
    reason: str
    version: Version | None
    source: str
    match: _Impl | None

    @property
    def considered(self) -> bool:
        return self.family is None or self.active == self.top

    def status(self) -> str:
        if self.version is not None:
            return f"{self.top} {self.version}"
        if versions.is_installed(self.top):
            return f"{self.top} (installed, version unknown: {self.source})"
        return f"{self.top} (not installed)"


class VersionDispatcher:
    """A function with implementations per module and version range; made by :func:`implement_for`.

    Call it like the function. ``implementations`` lists them, ``resolve()`` gives the one that
    runs now, ``explain()`` says why. Works as a method (also stacked under ``classmethod`` or
    ``staticmethod``) and pickles by reference (module and qualified name).

    Example:
        >>> @implement_for("packaging")
        ... def answer():
        ...     return 42
        >>> answer(), answer.resolve() is answer.__wrapped__
        (42, True)
    """

    def __init__(self, impl: _Impl, kind: str) -> None:
        self._impls: list[_Impl] = [impl]
        self._kind = kind
        self._cache: dict[frozenset[tuple[str, str]], Callable[..., Any]] = {}
        self._lock = threading.Lock()
        functools.update_wrapper(self, impl.function)
        self._method_call = self._make_method_call()
        _all.add(self)

    # -- the hot path -------------------------------------------------------------------------

    def __call__(self, /, *args: Any, **kwargs: Any) -> Any:
        try:
            fn = self._cache[_current_state()]
        except KeyError:
            fn = self._resolve_into_cache()
        return fn(*args, **kwargs)

    def _make_method_call(self) -> Callable[..., Any]:
        """The same hot path as a plain function, which binds as a method at C speed.

        A bound method around a callable object pays for two extra calls; around a function it
        pays for none. Its attributes forward to the dispatcher (``obj.meth.explain()`` works).
        """
        dispatcher = self

        def method_call(*args: Any, **kwargs: Any) -> Any:
            try:
                fn = dispatcher._cache[_current_state()]
            except KeyError:
                fn = dispatcher._resolve_into_cache()
            return fn(*args, **kwargs)

        functools.update_wrapper(method_call, self._impls[0].function)
        method_call.__dispatcher__ = self  # type: ignore[attr-defined]
        method_call.register = self.register  # type: ignore[attr-defined]
        method_call.resolve = self.resolve  # type: ignore[attr-defined]
        method_call.explain = self.explain  # type: ignore[attr-defined]
        method_call.implementations = self.implementations  # type: ignore[attr-defined]
        return method_call

    def _resolve_into_cache(self) -> Callable[..., Any]:
        state = _current_state()
        cache = self._cache  # a registration replaces the dict; a late write lands in the old one
        fn = self._chosen(self._analyse())
        cache[state] = fn
        return fn

    # -- methods ------------------------------------------------------------------------------

    def __set_name__(self, owner: type, name: str) -> None:
        """In a class, step aside for a plain function with the same hot path.

        Python binds plain functions in C; a descriptor object pays for a Python-level
        ``__get__`` on every attribute access. The function forwards ``register``, ``resolve``,
        ``explain`` and ``implementations``, and ``__dispatcher__`` leads back here.
        """
        if name != self.__name__ or vars(owner).get(name) is not self:
            return  # bound under another name too: keep the descriptor
        replacement: Any = self._method_call
        if self._kind == "classmethod":
            replacement = classmethod(replacement)
        elif self._kind == "staticmethod":
            replacement = staticmethod(replacement)
        setattr(owner, name, replacement)

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if self._kind == "staticmethod":
            return self
        if self._kind == "classmethod":
            return MethodType(self._method_call, objtype if objtype is not None else type(obj))
        return self if obj is None else MethodType(self._method_call, obj)

    # -- registration -------------------------------------------------------------------------

    def register(
        self,
        module_name: str | None = None,
        from_version: str | None = None,
        to_version: str | None = None,
    ) -> Callable[[Callable[..., Any]], VersionDispatcher]:
        """Add an implementation; ``module_name`` defaults to the first implementation's module.

        Example:
            >>> @implement_for("packaging", None, "1")
            ... def size():
            ...     return "tiny"
            >>> @size.register("packaging", "1")
            ... def _():
            ...     return "grown up"
            >>> size()
            'grown up'
        """
        module = self._impls[0].module if module_name is None else module_name
        _make_impl(module, from_version, to_version, len)  # fail early on bad input

        def decorate(fn: Callable[..., Any]) -> VersionDispatcher:
            raw, kind = _unwrap(fn)
            self._add(_make_impl(module, from_version, to_version, raw), kind)
            return self

        return decorate

    def _add(self, impl: _Impl, kind: str) -> None:
        with self._lock:
            if kind not in ("function", self._kind):
                raise ImplementationConflictError(
                    f"{self._name}: the first implementation is a {self._kind}, the one at "
                    f"{impl.where} is a {kind}; all implementations must be the same kind."
                )
            for other in self._impls:
                if other.top == impl.top and impl.overlaps(other):
                    raise ImplementationConflictError(
                        f"{self._name}: the implementation for {impl.label} "
                        f"({impl.where}) overlaps the one for {other.label} "
                        f"({other.where}). Each version of {impl.top} may have one implementation "
                        "only: make the ranges disjoint (from_version is inclusive, to_version "
                        "exclusive)."
                    )
            self._impls = [*self._impls, impl]
            self._cache = {}
            self._method_call.implementations = self.implementations  # type: ignore[attr-defined]

    def _defines(self, location: tuple[str, int] | None) -> bool:
        return location is not None and any(i.location == location for i in self._impls)

    # -- introspection ------------------------------------------------------------------------

    @property
    def _name(self) -> str:
        return f"{self.__module__}.{self.__qualname__}"

    @property
    def implementations(self) -> list[Implementation]:
        """Every implementation as ``(module, range, function)``, in registration order.

        Example:
            >>> @implement_for("packaging", "21", "22")
            ... def pinned():
            ...     return None
            >>> pinned.implementations[0][:2]
            ('packaging', '>=21,<22')
        """
        return [Implementation(i.module, i.range, i.function) for i in self._impls]

    def resolve(self) -> Callable[..., Any]:
        """The implementation a call would run now; raises :class:`NoImplementationError`.

        Example:
            >>> @implement_for("packaging", "1")
            ... def current():
            ...     return "current"
            >>> current.resolve() is current.__wrapped__
            True
        """
        try:
            return self._cache[_current_state()]
        except KeyError:
            return self._resolve_into_cache()

    def _analyse(self) -> list[_Row]:
        tops = list(dict.fromkeys(i.top for i in self._impls))
        rows = []
        for top in tops:
            family = backends.family_of(top)
            active, reason = backends._active_and_reason(family.name) if family else (None, "")
            version, source = versions.version_and_source(top)
            impls = [i for i in self._impls if i.top == top]
            row = _Row(top, impls, family, active, reason, version, source, None)
            if row.considered and version is not None:
                row.match = next((i for i in impls if i.contains(version)), None)
            rows.append(row)
        return rows

    def _chosen(self, rows: list[_Row]) -> Callable[..., Any]:
        return self._chosen_row(rows).match.function  # type: ignore[union-attr]

    def _chosen_row(self, rows: list[_Row]) -> _Row:
        """The active backend's match first, then matches of family-less modules, in order."""
        matches = [r for r in rows if r.match and r.family] + [
            r for r in rows if r.match and not r.family
        ]
        if not matches:
            raise NoImplementationError(self._no_implementation_message(rows))
        return matches[0]

    def _no_implementation_message(self, rows: list[_Row]) -> str:
        situation, todo = [], []
        families = list(dict.fromkeys(r.family for r in rows if r.family))
        for family in families:
            active, reason = backends._active_and_reason(family.name)
            if active is None:
                situation.append(f"no {family.name!r} backend is installed ({reason})")
            else:
                situation.append(
                    f"the active {family.name!r} backend is {_status(active)} ({reason})"
                )
        situation += [r.status() for r in rows if r.family is None]
        for row in rows:
            best = max(row.impls, key=lambda i: (i.upper is None, i.upper or Version("0")))
            install = (
                f'pip install "{_dist(row.top)}{"" if best.range == "any version" else best.range}"'
            )
            if row.considered or row.active is None:  # no member installed: any will do
                todo.append(f"install a supported version of {row.top}: {install}")
            elif row.family is not None and row.match is None:
                switch = _set_call(row.family.name, row.top)
                if row.version is not None and any(i.contains(row.version) for i in row.impls):
                    todo.append(f"switch backend: {switch} ({row.status()} is supported)")
                else:
                    todo.append(f"{install}, then switch backend: {switch}")
        supported = [f"  {r.top}: {' or '.join(i.range for i in r.impls)}" for r in rows]
        return "\n".join(
            [
                f"{self._name} has no implementation for what is installed and active:",
                *(f"  {line}" for line in situation),
                "Implementations exist for:",
                *supported,
                "To fix it, either:" if len(todo) > 1 else "To fix it:",
                *(f"  - {line}" for line in todo),
            ]
        )

    def explain(self) -> str:
        """Say which implementation runs now and why (backend, installed version, range).

        Example:
            >>> @implement_for("packaging", "1")
            ... def modern():
            ...     return True
            >>> print(modern.explain().splitlines()[0])  # doctest: +ELLIPSIS
            Dispatch of ...modern: the implementation for packaging >=1 runs (...).
        """
        rows = self._analyse()
        try:
            row = self._chosen_row(rows)
        except NoImplementationError as err:
            return f"Dispatch of {self._name}: no implementation can run now.\n{err}"
        impl = row.match
        assert impl is not None
        if row.family is not None:
            why = f"{row.top} is the active {row.family.name!r} backend ({row.reason})"
        else:
            why = f"{row.top} belongs to no backend family, so its installed version decides"
        fits = "which it accepts" if impl.open else f"in {impl.range}"
        lines = [
            f"Dispatch of {self._name}: the implementation for {impl.label} runs ({impl.where}).",
            f"  Why: {why}; {row.top} is {row.version} (from {row.source}), {fits}.",
            "  All implementations:",
        ]
        width = max(len(i.label) for i in self._impls)
        where_width = max(len(i.where) for i in self._impls)
        for r in rows:
            for i in r.impls:
                if i is impl:
                    note = "<- runs now"
                elif r.match is i:
                    note = f"(also matches {r.status()}; the active backend, then the first match, wins)"
                elif not r.considered:
                    note = f"({r.top} is not the active {r.family.name!r} backend)"  # type: ignore[union-attr]
                elif r.version is None:
                    note = f"({r.status()})"
                else:
                    note = f"(not for {r.version})"
                lines.append(f"    {i.label:<{width}}  {i.where:<{where_width}}  {note}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        ranges = " | ".join(i.label for i in self._impls)
        return f"<dispatched function {self._name}: {ranges}>"

    # -- pickling -----------------------------------------------------------------------------

    def __reduce__(self) -> tuple[Callable[..., Any], tuple[str, str]]:
        import pickle

        module, qualname = self.__module__, self.__qualname__
        if "<locals>" in qualname:
            raise pickle.PicklingError(
                f"cannot pickle {self._name}: it is defined inside a function, so another "
                "process cannot import it. Define it at module level."
            )
        try:
            found = _load_dispatcher(module, qualname)
        except Exception:
            found = None
        if found is not self:
            raise pickle.PicklingError(
                f"cannot pickle {self._name}: importing {module!r} and looking up {qualname!r} "
                f"gives {found!r}, not this function. Bind it under its own name at module or "
                "class level."
            )
        return _load_dispatcher, (module, qualname)


def _status(module: str) -> str:
    version = versions.module_version(module)
    return f"{module} {version}" if version is not None else f"{module} (not installed)"


def _dist(top: str) -> str:
    if versions.module_version(top) is not None:
        return versions.distribution_name(top) or top
    return versions.DISTRIBUTION_OVERRIDES.get(top, top)


def implement_for(
    module_name: str, from_version: str | None = None, to_version: str | None = None
) -> Callable[[Callable[..., Any]], VersionDispatcher]:
    """Mark a function as the implementation for ``module_name`` versions in [from, to).

    ``from_version`` is inclusive, ``to_version`` exclusive, ``None`` is open; versions compare
    by PEP 440, so ``0.26.0rc1`` falls below ``0.26.0``. Decorating another function of the same
    module and qualified name adds to the same dispatcher; so does ``.register(...)``.
    Overlapping ranges for one module raise :class:`~hub.errors.ImplementationConflictError`.

    Example:
        >>> @implement_for("packaging", None, "0.1")
        ... def era():
        ...     return "prehistoric"
        >>> @implement_for("packaging", "0.1")
        ... def era():
        ...     return "modern"
        >>> era()
        'modern'
    """
    _make_impl(module_name, from_version, to_version, len)  # fail early on bad input

    def decorate(fn: Callable[..., Any]) -> VersionDispatcher:
        if isinstance(fn, VersionDispatcher):  # stacked: the same function serves another range
            last = fn._impls[-1]
            fn._add(_make_impl(module_name, from_version, to_version, last.function), "function")
            return fn
        raw, kind = _unwrap(fn)
        impl = _make_impl(module_name, from_version, to_version, raw)
        key = (getattr(raw, "__module__", None) or "", getattr(raw, "__qualname__", repr(raw)))
        with _name_lock:
            existing = _by_name.get(key)
            # The same `def` seen again (a module reloaded, a factory called twice) starts a new
            # dispatcher instead of clashing with its own earlier run.
            if existing is not None and not existing._defines(impl.location):
                existing._add(impl, kind)
                return existing
            dispatcher = VersionDispatcher(impl, kind)
            _by_name[key] = dispatcher
        return dispatcher

    return decorate


def registered_dispatchers(prefix: str = "") -> list[VersionDispatcher]:
    """Every live dispatcher whose module starts with ``prefix``, sorted by qualified name.

    Only dispatchers of imported modules exist: import a plugin's modules first to see all of
    its version differences (``docs/gen_compatibility.py`` does).

    Example:
        >>> @implement_for("packaging")
        ... def listed():
        ...     return None
        >>> listed in registered_dispatchers(__name__)
        True
    """
    found = [d for d in list(_all) if d.__module__.startswith(prefix)]
    return sorted(found, key=lambda d: d._name)
