"""``hub plugins``."""

from __future__ import annotations

import pytest

import hub
from hub.plugins import PluginInfo

from .conftest import json_of, require

FAKE_PLUGINS = [
    PluginInfo("hub", "0.1.0", "hub_builtin.plugin", ("hub",), None, True, ("hub_namespaces",)),
    PluginInfo("broken", "2.0", "broken.plugin", (), "ImportError: no module [named] x", False),
]


@pytest.fixture
def fake_plugins(monkeypatch):
    monkeypatch.setattr(hub, "list_plugins", lambda: list(FAKE_PLUGINS), raising=False)


def test_plugins_json_shape(invoke, fake_plugins):
    data = json_of(invoke("plugins", "--json"))
    assert data == [
        {
            "name": "hub",
            "version": "0.1.0",
            "module": "hub_builtin.plugin",
            "namespaces": ["hub"],
            "error": None,
        },
        {
            "name": "broken",
            "version": "2.0",
            "module": "broken.plugin",
            "namespaces": [],
            "error": "ImportError: no module [named] x",
        },
    ]


def test_plugins_table_shows_status_and_errors(invoke, fake_plugins):
    result = invoke("plugins")
    assert result.exit_code == 0
    out = result.stdout
    assert "hub (built-in)" in out and "hub_builtin.plugin" in out
    assert "ok" in out
    assert "no module [named] x" in out  # brackets are text, not rich markup
    assert "1 plugin(s) failed to load: broken" in out


def test_plugins_json_real():
    require("hub.registry")
    from click.testing import CliRunner

    from hub.cli import cli

    data = json_of(CliRunner().invoke(cli, ["plugins", "--json"]))
    builtin = next(p for p in data if p["name"] == "hub")
    assert builtin["namespaces"] == ["hub"] and builtin["error"] is None
    assert set(builtin) == {"name", "version", "module", "namespaces", "error"}


def test_plugins_table_real(invoke):
    require("hub.registry")
    result = invoke("plugins")
    assert result.exit_code == 0
    assert "hub_builtin.plugin" in result.stdout
