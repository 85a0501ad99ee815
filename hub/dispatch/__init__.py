"""Version dispatch and backend families.

* :func:`implement_for` picks a function's implementation by the active backend and the
  installed version of a module (found without importing it);
* :class:`BackendFamily`, :func:`set_backend` / :func:`set_gym_backend` and :func:`get_backend`
  / :func:`gym_backend` choose between interchangeable libraries, per thread and task;
* :func:`backend_state` / :func:`restore_backend_state` carry the choice into worker processes.

Importing this package imports no backend and not torch.

Example:
    >>> import hub.dispatch as dispatch
    >>> @dispatch.implement_for("packaging", "20")
    ... def recent_packaging():
    ...     return True
    >>> recent_packaging()
    True
"""

from __future__ import annotations

from hub.dispatch.backends import (
    GYM_FAMILY,
    BackendFamily,
    active_backend,
    backend_state,
    family_of,
    get_backend,
    get_backend_family,
    gym_backend,
    list_backend_families,
    register_backend_family,
    restore_backend_state,
    set_backend,
    set_gym_backend,
    unregister_backend_family,
)
from hub.dispatch.implement_for import (
    Implementation,
    VersionDispatcher,
    implement_for,
    registered_dispatchers,
)
from hub.dispatch.versions import (
    VersionRangeError,
    clear_version_cache,
    is_installed,
    module_version,
)

__all__ = [
    "GYM_FAMILY",
    "BackendFamily",
    "Implementation",
    "VersionDispatcher",
    "VersionRangeError",
    "active_backend",
    "backend_state",
    "clear_version_cache",
    "family_of",
    "get_backend",
    "get_backend_family",
    "gym_backend",
    "implement_for",
    "is_installed",
    "list_backend_families",
    "module_version",
    "register_backend_family",
    "registered_dispatchers",
    "restore_backend_state",
    "set_backend",
    "set_gym_backend",
    "unregister_backend_family",
]
