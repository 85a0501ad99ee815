"""``hub plugins``."""

from __future__ import annotations

import json

import pytest

import hub
from hub.plugins import PluginInfo

from .conftest import json_of, require

TRACE = 'Traceback (most recent call last):\n  File "broken/plugin.py", line 1\nImportError: x\n'
FAKE_PLUGINS = [
    PluginInfo(
        "hub",
        "0.1.0",
        "hub_builtin.plugin",
        ("hub",),
        None,
        True,
        ("hub_namespaces",),
        load_time=0.0021,
    ),
    PluginInfo(
        "broken",
        "2.0",
        "broken.plugin",
        (),
        "ImportError: no module [named] x",
        False,
        load_time=1.5,
        traceback=TRACE,
    ),
]


@pytest.fixture
def fake_plugins(monkeypatch):
    monkeypatch.setattr(hub, "list_plugins", lambda: list(FAKE_PLUGINS), raising=False)


def test_plugins_json_shape(invoke, fake_plugins):
    result = invoke("plugins", "--json")
    assert result.exit_code == 1  # a plugin failed
    data = json.loads(result.stdout)
    assert data == [
        {
            "name": "hub",
            "version": "0.1.0",
            "module": "hub_builtin.plugin",
            "namespaces": ["hub"],
            "error": None,
            "load_time": 0.0021,
            "traceback": None,
            "overrides": [],
        },
        {
            "name": "broken",
            "version": "2.0",
            "module": "broken.plugin",
            "namespaces": [],
            "error": "ImportError: no module [named] x",
            "load_time": 1.5,
            "traceback": TRACE,
            "overrides": [],
        },
    ]


def test_plugins_table_shows_status_and_errors(invoke, fake_plugins):
    result = invoke("plugins")
    assert result.exit_code == 1
    out = result.stdout
    assert "hub (built-in)" in out and "hub_builtin.plugin" in out
    assert "ok" in out
    assert "no module [named] x" in out  # brackets are text, not rich markup
    assert "1 plugin(s) failed to load: broken" in out
    assert "Traceback" not in out and "load time" not in out


def test_plugins_verbose_shows_load_times_and_tracebacks(invoke, fake_plugins):
    result = invoke("plugins", "--verbose")
    assert result.exit_code == 1
    out = result.stdout
    assert "load time" in out and "2 ms" in out and "1.5 s" in out
    assert "plugin broken: ImportError: no module [named] x" in out
    assert 'File "broken/plugin.py", line 1' in out


def test_plugins_exit_zero_when_every_plugin_works(invoke, monkeypatch):
    monkeypatch.setattr(hub, "list_plugins", lambda: FAKE_PLUGINS[:1], raising=False)
    assert invoke("plugins").exit_code == 0
    assert invoke("plugins", "--json").exit_code == 0


def test_plugins_json_real():
    require("hub.registry")
    from click.testing import CliRunner

    from hub.cli import cli

    data = json_of(CliRunner().invoke(cli, ["plugins", "--json"]))
    builtin = next(p for p in data if p["name"] == "hub")
    assert builtin["namespaces"] == ["hub"] and builtin["error"] is None
    assert {"name", "version", "module", "namespaces", "error", "load_time", "traceback"} <= set(
        builtin
    )
    assert builtin["load_time"] >= 0 and builtin["traceback"] is None


def test_plugins_table_real(invoke):
    require("hub.registry")
    result = invoke("plugins")
    assert result.exit_code == 0
    assert "hub_builtin.plugin" in result.stdout
