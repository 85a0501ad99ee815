"""``hub envs [NS]``."""

from __future__ import annotations

import pytest

import hub
from hub.cli import envs as envs_module

from .conftest import json_of, require


@pytest.fixture
def real_registry():
    require("hub.registry")


def test_envs_of_a_namespace_one_per_line(invoke, real_registry):
    result = invoke("envs", "hub")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert "hub:Pendulum" in lines and "hub:Counting" in lines
    assert all(line.startswith("hub:") for line in lines)


def test_envs_json_is_a_list_of_uris(invoke, real_registry):
    data = json_of(invoke("envs", "hub", "--json"))
    assert isinstance(data, list) and "hub:Pendulum" in data
    assert data == sorted(data)


def test_envs_without_namespace_is_a_list_when_piped(invoke, real_registry):
    result = invoke("envs")
    assert result.exit_code == 0
    assert "hub:Counting" in result.stdout.splitlines()


def test_envs_counts_table_on_a_terminal(invoke, real_registry, monkeypatch):
    monkeypatch.setattr(envs_module, "is_tty", lambda stream=None: True)
    result = invoke("envs")
    assert result.exit_code == 0
    assert "namespace" in result.stdout and "examples" in result.stdout
    row = next(line for line in result.stdout.splitlines() if " hub " in line)
    assert str(len(hub.list_envs("hub"))) in row


def test_envs_counts_forced_and_list_forced(invoke, real_registry, monkeypatch):
    monkeypatch.setattr(envs_module, "is_tty", lambda stream=None: True)
    assert "examples" in invoke("envs", "hub", "--counts").stdout
    assert "hub:Pendulum" in invoke("envs", "--list").stdout.splitlines()


def test_envs_unknown_namespace_is_an_error(invoke, real_registry):
    result = invoke("envs", "nosuchnamespace")
    assert result.exit_code == 1
    assert "nosuchnamespace" in result.stderr
    assert "Traceback" not in result.output


def test_envs_counts_with_fakes(invoke, monkeypatch):
    uris = ["toy:A", "toy:B", "toy:C", "toy:D", "other:X"]
    monkeypatch.setattr(hub, "list_envs", lambda namespace=None: list(uris), raising=False)
    monkeypatch.setattr(hub, "list_plugins", lambda: [], raising=False)
    result = invoke("envs", "--counts")
    assert result.exit_code == 0, result.output
    assert "A, B, C, ..." in result.stdout
    assert "5 envs" in result.stdout


@pytest.fixture
def missing_backend():
    """A namespace whose backend library is not installed, registered for the test."""
    from hub.plugins import Namespace, get_plugin_manager, hookimpl

    class Plugin:
        @hookimpl
        def hub_namespaces(self):
            return [
                Namespace(
                    "absentlib",
                    make=print,
                    list_envs=lambda: ["Walk-v0"],
                    requires=("hubtest_surely_missing_lib",),
                    extra="absentlib",
                )
            ]

    manager = get_plugin_manager()
    manager.register(Plugin(), name="absentlib")
    yield "absentlib"
    manager.unregister("absentlib")


@pytest.mark.parametrize("as_json", [False, True])
def test_envs_of_a_namespace_whose_library_is_missing_says_so(invoke, missing_backend, as_json):
    result = invoke("envs", missing_backend, *(["--json"] if as_json else []))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert "needs 'hubtest_surely_missing_lib', which is not installed" in result.stderr
    assert 'pip install "hub[absentlib]"' in result.stderr


def test_envs_gym_without_gym_names_the_install_line(invoke, real_registry):
    import importlib.util

    if importlib.util.find_spec("gym") is not None:
        pytest.skip("gym is installed here (tox envs with gym list its envs)")
    result = invoke("envs", "gym")
    assert result.exit_code == 1
    assert 'pip install "hub[gym]"' in result.stderr
