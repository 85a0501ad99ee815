"""Errors raised by hub.

Every error hub raises derives from :class:`HubError`, and each also derives from the builtin
exception a Python user would expect (``LookupError`` for an unknown name, ``ImportError`` for a
missing library, ``ValueError`` for bad data), so ``except KeyError``-style code keeps working.

Messages are written for people: they say what was wrong, what was expected and what to do next.

Example:
    >>> from hub.errors import MissingDependencyError
    >>> err = MissingDependencyError("envpool", extra="envpool")
    >>> err.install_line
    'pip install "hub[envpool]"'
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "HubError",
    "UnknownNamespaceError",
    "UnknownEnvError",
    "MissingDependencyError",
    "NoImplementationError",
    "ImplementationConflictError",
    "SpecMismatchError",
    "WorkerError",
    "WorkerTimeoutError",
    "ClosedEnvError",
    "PluginError",
    "PluginLoadError",
    "BackendError",
    "SpecConversionError",
    "BatchingError",
    "InvalidSeedError",
    "NoFramesError",
]


class HubError(Exception):
    """Base class of every error hub raises."""


class UnknownNamespaceError(HubError, LookupError):
    """An env URI names a namespace no loaded plugin serves.

    Attributes:
        namespace: the namespace that was asked for.
        known: the namespaces that are served.
    """

    def __init__(self, message: str, *, namespace: str = "", known: tuple[str, ...] = ()):
        super().__init__(message)
        self.namespace = namespace
        self.known = tuple(known)

    def __str__(self) -> str:  # LookupError would quote the message otherwise
        return self.args[0]


class UnknownEnvError(HubError, LookupError):
    """An env id is not served by its namespace.

    Attributes:
        env_id: the id that was asked for.
        suggestions: the closest known ids.
    """

    def __init__(self, message: str, *, env_id: str = "", suggestions: tuple[str, ...] = ()):
        super().__init__(message)
        self.env_id = env_id
        self.suggestions = tuple(suggestions)

    def __str__(self) -> str:
        return self.args[0]


class MissingDependencyError(HubError, ImportError):
    """A backend library is not installed.

    Attributes:
        package: the import name that is missing.
        extra: the ``hub`` extra that installs it, if any.
        install_line: the exact command that fixes it.
    """

    def __init__(self, package: str, *, extra: str | None = None, message: str | None = None):
        self.package = package
        self.extra = extra
        if extra:
            self.install_line = f'pip install "hub[{extra}]"'
        else:
            self.install_line = f"pip install {package}"
        if message is None:
            message = f"{package!r} is not installed. Install it with: {self.install_line}"
        super().__init__(message, name=package)


class NoImplementationError(HubError, ImportError):
    """A version-dispatched function has no implementation for the installed version."""


class ImplementationConflictError(HubError, ValueError):
    """Two implementations of one dispatched function claim overlapping version ranges."""


class SpecMismatchError(HubError, ValueError):
    """A value does not match its spec.

    Attributes:
        key: the tensordict key of the value (a string or a tuple of strings).
        expected: the spec (or a description of what was expected).
        got: a description of what came.
    """

    def __init__(self, key: Any, expected: Any, got: Any, *, where: str = ""):
        self.key = key
        self.expected = expected
        self.got = got
        place = f" in {where}" if where else ""
        super().__init__(
            f"entry {key!r}{place} does not match its spec: expected {expected}, got {got}."
        )


class WorkerError(HubError, RuntimeError):
    """A batched-env worker failed.

    Attributes:
        worker: the index of the worker.
        traceback: the worker's formatted traceback (a string), when there is one.
    """

    def __init__(self, message: str, *, worker: int | None = None, traceback: str | None = None):
        self.worker = worker
        self.traceback = traceback
        if traceback:
            message = f"{message}\n\nTraceback from worker {worker}:\n{traceback}"
        super().__init__(message)


class WorkerTimeoutError(WorkerError, TimeoutError):
    """A batched-env worker did not answer in time."""


class ClosedEnvError(HubError, RuntimeError):
    """An env was used after ``close()``."""


class PluginError(HubError, RuntimeError):
    """A plugin's function raised or returned the wrong kind of object (a ``make`` that returns
    no env, a converter that returns no spec, a ``list_envs`` that raises); the message names the
    plugin."""


class PluginLoadError(PluginError):
    """A plugin failed to import or register (raised under ``HUB_STRICT_PLUGINS=1``)."""


class BackendError(HubError, LookupError):
    """A backend family or backend name is unknown or cannot be activated."""

    def __str__(self) -> str:
        return self.args[0]


class SpecConversionError(HubError, LookupError):
    """No spec conversion is registered for a foreign space or spec type."""

    def __str__(self) -> str:
        return self.args[0]


class BatchingError(HubError, ValueError):
    """A batching request cannot be met (an unknown strategy, ``num_envs`` missing or invalid,
    ``batching="native"`` on a namespace without native batching)."""


class InvalidSeedError(HubError, ValueError):
    """A seed is not an int in hub's range (``0 <= seed < 2**32``)."""


class NoFramesError(HubError, NotImplementedError):
    """An env gives no frames to watch or record: its class does not render
    (``EnvBase.render_frames``'s default), or it was made without rendering on. The message
    says how to get frames (see :data:`hub.media.HOW_TO_GET_FRAMES`)."""
