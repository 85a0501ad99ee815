"""Shared fixtures of the command-line tests.

Tests that need a part of hub another module provides (the registry, the built-in envs) ask for
it with :func:`require`, which skips them with the reason until that part exists.
"""

from __future__ import annotations

import importlib
import json
from typing import Any

import pytest
from click.testing import CliRunner, Result

from hub.cli import cli


def require(*modules: str) -> None:
    """Skip the calling test unless every module imports."""
    for name in modules:
        try:
            importlib.import_module(name)
        except ImportError as err:
            pytest.skip(f"needs {name}, which is not available yet: {err}")


def require_env(uri: str) -> None:
    """Skip the calling test unless ``uri`` can be built."""
    require("hub.registry")
    import hub

    try:
        hub.make_env(uri).close()
    except Exception as err:  # noqa: BLE001 - any failure means "not available here"
        pytest.skip(f"{uri} cannot be built here: {type(err).__name__}: {err}")


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    """The tests check the messages people see, so a HUB_DEBUG=1 of the caller is ignored."""
    monkeypatch.delenv("HUB_DEBUG", raising=False)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def invoke(runner: CliRunner):
    """``invoke(*args)`` runs ``hub *args`` in-process and returns click's Result."""

    def run(*args: str, **kwargs: Any) -> Result:
        return runner.invoke(cli, list(args), **kwargs)

    return run


def json_of(result: Result) -> Any:
    """The JSON a command printed on stdout (fails the test with its output otherwise)."""
    assert result.exit_code == 0, (result.exit_code, result.output, result.exception)
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError as err:  # pragma: no cover - the message is the point
        raise AssertionError(f"stdout is not JSON: {err}\n{result.stdout}") from err


@pytest.fixture
def test_plugin():
    """Register the in-memory plugin of ``fake_plugin`` (namespaces ``clitest``, ...)."""
    require("hub.registry", "hub.envs")
    from hub.plugins import get_plugin_manager

    from . import fake_plugin

    manager = get_plugin_manager()
    info = manager.register(fake_plugin.Plugin(), name=fake_plugin.NAME, version="9.9")
    assert info.error is None, info.error
    yield fake_plugin
    manager.unregister(fake_plugin.NAME)
