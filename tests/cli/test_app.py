"""The ``hub`` group: help, version, and how errors reach a person."""

from __future__ import annotations

import click
import pytest

import hub
from hub.cli.app import cli
from hub.cli.errors import CliError, format_error
from hub.errors import MissingDependencyError, UnknownNamespaceError, WorkerError

COMMANDS = ("plugins", "envs", "info", "rollout", "bench", "serve", "doctor", "new-plugin")


def test_help_lists_every_command(invoke):
    result = invoke("--help")
    assert result.exit_code == 0
    for name in COMMANDS:
        assert name in result.stdout


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_has_help_and_json(invoke, name):
    result = invoke(name, "--help")
    assert result.exit_code == 0, result.output
    assert "--json" in result.stdout
    assert "Example" in result.stdout


def test_version(invoke):
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"hub {hub.__version__}"


def test_unknown_command_is_a_usage_error(invoke):
    result = invoke("nope")
    assert result.exit_code == 2
    assert "No such command" in result.stderr


@click.command("boom")
@click.option("--kind", default="hub")
def boom(kind: str) -> None:
    """Raise an error of the given kind (for the tests)."""
    if kind == "hub":
        raise UnknownNamespaceError("No plugin serves the env namespace 'foo'.", namespace="foo")
    if kind == "missing":
        raise MissingDependencyError("envpool", extra="envpool")
    if kind == "worker":
        raise WorkerError("worker 2 failed: ValueError: bad", worker=2, traceback="Traceback ...")
    if kind == "cli":
        raise CliError("a plain problem") from KeyError("the cause")
    raise RuntimeError("a bug")


@pytest.fixture
def with_boom():
    cli.add_command(boom)
    yield
    cli.commands.pop("boom")


def test_hub_error_is_one_clean_paragraph(invoke, with_boom):
    result = invoke("boom")
    assert result.exit_code == 1
    assert result.stderr == "Error: No plugin serves the env namespace 'foo'.\n"
    assert "Traceback" not in result.output


def test_missing_dependency_shows_the_install_line(invoke, with_boom):
    result = invoke("boom", "--kind", "missing")
    assert result.exit_code == 1
    assert 'pip install "hub[envpool]"' in result.stderr


def test_worker_traceback_is_hidden_without_debug(invoke, with_boom):
    result = invoke("boom", "--kind", "worker")
    assert result.exit_code == 1
    assert "worker 2 failed" in result.stderr
    assert "Traceback" not in result.stderr
    assert "--debug" in result.stderr


def test_debug_flag_raises_the_original_error(invoke, with_boom):
    result = invoke("--debug", "boom")
    assert result.exit_code == 1
    assert isinstance(result.exception, UnknownNamespaceError)


def test_hub_debug_variable_raises_the_original_error(invoke, with_boom, monkeypatch):
    monkeypatch.setenv("HUB_DEBUG", "1")
    result = invoke("boom", "--kind", "cli")
    assert isinstance(result.exception, KeyError)


def test_cli_error_without_debug(invoke, with_boom):
    result = invoke("boom", "--kind", "cli")
    assert result.exit_code == 1
    assert result.stderr == "Error: a plain problem\n"


def test_a_bug_keeps_its_traceback(invoke, with_boom):
    result = invoke("boom", "--kind", "bug")
    assert result.exit_code == 1
    assert isinstance(result.exception, RuntimeError)


def test_format_error_keeps_the_first_paragraph():
    assert format_error(ValueError("one\ntwo")) == "one\ntwo"
    assert format_error(ValueError("")) == "ValueError"
    assert format_error(ValueError("first\n\nsecond")).startswith("first (details hidden")
