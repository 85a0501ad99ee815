"""Version dispatch as ``hub info`` shows it: which implementation of each function runs, and why.

``hub.dispatch`` has no public list of its dispatched functions, so they are found where an env
can use them: the module-level and class-level attributes of the already imported modules of the
env's packages (its plugin's package, the env class's package). Nothing new is imported.

Example:
    >>> from hub.dispatch import implement_for
    >>> @implement_for("packaging", "1")
    ... def modern():
    ...     return True
    >>> describe_dispatcher(modern)["runs"]
    'packaging >=1'
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from types import ModuleType
from typing import Any


def _dispatcher_class() -> type:
    from hub.dispatch import VersionDispatcher

    return VersionDispatcher


def modules_of(packages: Iterable[str]) -> list[ModuleType]:
    """The imported modules of the given top-level packages (and their submodules).

    Example:
        >>> [m.__name__ for m in modules_of(["json"])][:1]
        ['json']
    """
    tops = {p.partition(".")[0] for p in packages if p}
    found = []
    for name, module in sorted(sys.modules.items()):
        if module is not None and name.partition(".")[0] in tops:
            found.append(module)
    return found


def find_dispatchers(packages: Iterable[str]) -> list[Any]:
    """The version-dispatched functions defined in the imported modules of ``packages``.

    Looks at module attributes and at the attributes of classes defined in those modules
    (dispatched methods). Each function is listed once.

    Example:
        >>> find_dispatchers(["json"])
        []
    """
    dispatcher_type = _dispatcher_class()
    seen: dict[int, Any] = {}
    for module in modules_of(packages):
        try:
            members = list(vars(module).values())
        except TypeError:
            continue
        for value in members:
            candidates = [value]
            if isinstance(value, type) and value.__module__ == module.__name__:
                candidates = list(vars(value).values())
            for candidate in candidates:
                candidate = getattr(candidate, "__func__", candidate)  # classmethod/staticmethod
                if isinstance(candidate, dispatcher_type):
                    seen.setdefault(id(candidate), candidate)
    return sorted(seen.values(), key=dispatcher_name)


def dispatcher_name(dispatcher: Any) -> str:
    """``module.qualname`` of a dispatched function."""
    return f"{dispatcher.__module__}.{dispatcher.__qualname__}"


def describe_dispatcher(dispatcher: Any) -> dict[str, Any]:
    """Which implementation runs now, the others, and the dispatcher's own explanation.

    Returns ``{"name", "runs", "implementations": [{"module", "range", "runs"}], "why",
    "error"}``; ``runs`` is ``"module range"`` or ``None`` when no implementation fits.
    """
    from hub.errors import HubError

    error = None
    try:
        chosen = dispatcher.resolve()
    except HubError as err:
        chosen, error = None, str(err)
    implementations = []
    runs = None
    for impl in dispatcher.implementations:
        selected = chosen is not None and impl.function is chosen
        implementations.append({"module": impl.module, "range": impl.range, "runs": selected})
        if selected and runs is None:
            runs = f"{impl.module} {impl.range}"
    explanation = dispatcher.explain()
    why = next(
        (
            line.strip().removeprefix("Why:").strip()
            for line in explanation.splitlines()
            if line.strip().startswith("Why:")
        ),
        None,
    )
    return {
        "name": dispatcher_name(dispatcher),
        "runs": runs,
        "implementations": implementations,
        "why": why,
        "error": error,
        "explain": explanation,
    }
