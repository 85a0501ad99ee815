"""Keyword arguments an env does not take: found before building it, or read off Python's
``TypeError``, and reported as :class:`hub.errors.UnknownKeywordError` with the close matches.

A namespace's ``make`` passes most keywords on (to an env class, then to ``EnvBase``, or to a
backend's own ``make``). A plugin that knows every name it takes checks them first with
:func:`check_keywords` (the names of a class and of the ``__init__`` methods its ``**kwargs``
reach come from :func:`keywords_of`); for any other plugin, ``make_env`` turns the
``TypeError: ... got an unexpected keyword argument 'x'`` of a keyword the user passed into the
same error.

Example:
    >>> import hub
    >>> try:
    ...     check_keywords({"fromm_pixels": True}, ["from_pixels", "device"], uri="hub:Pendulum")
    ... except hub.errors.UnknownKeywordError as err:
    ...     print(err.keyword, err.suggestions)
    fromm_pixels ('from_pixels',)
"""

from __future__ import annotations

import difflib
import functools
import inspect
import re
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from hub.errors import UnknownKeywordError
from hub.registry.uris import shown

__all__ = [
    "Keywords",
    "check_keywords",
    "keywords_of",
    "unexpected_keyword",
    "unknown_keyword_error",
]

SHOWN_NAMES = 24  # an error lists at most this many of the accepted names
_UNEXPECTED = re.compile(r"got an unexpected keyword argument '([^']+)'")
_NAMED = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


class Keywords(NamedTuple):
    """The keyword arguments a callable takes.

    Attributes:
        names: the named parameters (keyword-only or positional-or-keyword).
        complete: ``False`` when a ``**kwargs`` takes any other name too (then a name outside
            ``names`` cannot be refused before the call).
    """

    names: frozenset[str]
    complete: bool


def _parameters(fn: Callable[..., Any]) -> tuple[set[str], bool]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):  # builtins without a signature
        return set(), False
    names = {p.name for p in signature.parameters.values() if p.kind in _NAMED}
    more = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values())
    return names, not more


def keywords_of(target: Any, *, skip: Iterable[str] = ()) -> Keywords:
    """The keywords ``target`` takes: a function's parameters, or for a class those of its
    ``__init__`` and, while an ``__init__`` takes ``**kwargs``, those of the next ``__init__``
    in the method resolution order (the chain of ``super().__init__(**kwargs)`` of env classes).

    Args:
        target: a class, a function or a ``functools.partial``.
        skip: names left out (the arguments the caller passes itself, such as ``batch_size``).

    Example:
        >>> class Base:
        ...     def __init__(self, *, device=None):
        ...         pass
        >>> class Walk(Base):
        ...     def __init__(self, steps=10, **kwargs):
        ...         super().__init__(**kwargs)
        >>> sorted(keywords_of(Walk).names), keywords_of(Walk).complete
        (['device', 'steps'], True)
    """
    skipped = set(skip)
    if isinstance(target, functools.partial):
        names, complete = _parameters(target)
        return Keywords(frozenset(names - skipped), complete)
    if not isinstance(target, type):
        names, complete = _parameters(target)
        return Keywords(frozenset(names - skipped), complete)
    found: set[str] = set()
    complete = True
    for cls in target.__mro__:
        init = cls.__dict__.get("__init__")
        if init is None:
            continue
        if cls is object:
            break
        names, complete = _parameters(init)
        found |= names - {"self"}
        if complete:
            break
    return Keywords(frozenset(found - skipped), complete)


def unexpected_keyword(exc: BaseException) -> str | None:
    """The keyword that ``exc`` (a ``TypeError``, or an error raised from one) says a callable
    did not take; ``None`` when it says nothing of the kind.

    Example:
        >>> def walk(steps=1):
        ...     pass
        >>> try:
        ...     walk(stpes=2)
        ... except TypeError as err:
        ...     print(unexpected_keyword(err))
        stpes
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, TypeError):
            match = _UNEXPECTED.search(str(current))
            if match:
                return match.group(1)
        current = current.__cause__ or current.__context__
    return None


def unknown_keyword_error(
    keyword: str, accepted: Iterable[str], *, uri: str, hint: str = ""
) -> UnknownKeywordError:
    """The error for ``keyword``, which ``uri`` does not take, with the close matches among
    ``accepted``.

    Example:
        >>> print(unknown_keyword_error("sead", ["seed", "device"], uri="hub:Counting"))
        'hub:Counting' takes no keyword argument 'sead'; did you mean 'seed'?
        >>> print(unknown_keyword_error("x", ["seed", "device"], uri="hub:Counting"))
        'hub:Counting' takes no keyword argument 'x'. It takes: device, seed.
    """
    names = sorted(set(accepted))
    close = tuple(difflib.get_close_matches(keyword, names, n=3, cutoff=0.6))
    message = f"{shown(uri)} takes no keyword argument {keyword!r}"
    if close:
        message += "; did you mean " + " or ".join(repr(name) for name in close) + "?"
    elif names:
        listed = ", ".join(names[:SHOWN_NAMES]) + (", ..." if len(names) > SHOWN_NAMES else "")
        message += f". It takes: {listed}."
    else:
        message += "."
    if hint:
        message += f" {hint}"
    return UnknownKeywordError(message, keyword=keyword, suggestions=close, accepted=tuple(names))


def check_keywords(given: Iterable[str], accepted: Iterable[str], *, uri: str) -> None:
    """Raise :class:`hub.errors.UnknownKeywordError` for the first name of ``given`` that is
    not in ``accepted``; a plugin's ``make`` calls it before building anything.

    Example:
        >>> check_keywords({"seed": 1}, ["seed"], uri="hub:Counting")  # nothing to say
    """
    allowed = set(accepted)
    for name in given:
        if name not in allowed:
            raise unknown_keyword_error(name, allowed, uri=uri)
