"""Dispatched functions at module level, importable by a spawned child (pickling, workers)."""

from __future__ import annotations

import sys

from hub.dispatch import (
    BackendFamily,
    backend_state,
    implement_for,
    register_backend_family,
    restore_backend_state,
)

# A family of two real, installed modules; the tests and the children register it themselves.
NUMERIC = BackendFamily("hub-test-numeric", ("numpy", "torch"))


@implement_for("numpy", None, "1.0")
def numpy_generation() -> str:
    """Which numpy generation is installed."""
    return "numpy 0.x"


@numpy_generation.register(from_version="1.0", to_version="2.0")
def _() -> str:
    return "numpy 1.x"


@numpy_generation.register(from_version="2.0")
def _() -> str:
    return "numpy 2 or later"


@implement_for("numpy")
def array_library() -> str:
    """The array library the active backend of NUMERIC stands for."""
    return "numpy"


@array_library.register("torch")
def _() -> str:
    return "torch"


class Shape:
    """A class with a dispatched method and a dispatched classmethod."""

    def __init__(self, n: int) -> None:
        self.n = n

    @implement_for("numpy", None, "2.0")
    def describe(self) -> str:
        return f"old numpy shape {self.n}"

    @implement_for("numpy", "2.0")
    def describe(self) -> str:  # noqa: F811 - a second implementation of the same method
        return f"shape {self.n}"

    @classmethod
    @implement_for("numpy")
    def kind(cls) -> str:
        return cls.__name__


class SubShape(Shape):
    """Inherits the dispatched methods."""


def call(fn, *args):  # noqa: ANN001, ANN201 - run a pickled callable in a child
    """Call ``fn(*args)`` (the child side of the pickling test)."""
    return fn(*args)


def child_report(state: dict[str, str]) -> tuple[str, dict[str, str], bool]:
    """What a worker sees after restoring the parent's backend state."""
    register_backend_family(NUMERIC)
    restore_backend_state(state)
    return array_library(), backend_state(), "torch" in sys.modules
