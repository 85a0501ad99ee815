"""``hub doctor``."""

from __future__ import annotations

import importlib.util
import json

import pytest

import hub
from hub.cli.doctor_checks import mujoco_gl_report

from .conftest import json_of, require


def test_doctor_json(invoke):
    require("hub.registry")
    data = json_of(invoke("doctor", "--json"))
    assert {
        "python",
        "packages",
        "plugins",
        "namespaces",
        "backends",
        "mujoco_gl",
        "problems",
        "ok",
    } <= set(data)
    versions = {p["name"]: p["version"] for p in data["packages"]}
    assert versions["torch"] and versions["tensordict"] and versions["numpy"]
    hub_ns = next(ns for ns in data["namespaces"] if ns["name"] == "hub")
    assert hub_ns["ok"] is True and hub_ns["missing"] == []


def test_doctor_reports_missing_backend_with_install_line(invoke, test_plugin):
    data = json_of(invoke("doctor", "--json"))
    row = next(ns for ns in data["namespaces"] if ns["name"] == "clitest_missing")
    assert row["ok"] is False
    assert row["missing"] == ["a_module_that_is_not_installed"]
    assert row["install"] == 'pip install "hub[clitest-extra]"'
    assert row["plugin"] == test_plugin.NAME
    # a backend that is not installed is not a problem
    assert not any("clitest" in problem for problem in data["problems"])

    table = invoke("doctor")
    assert table.exit_code == 0
    assert 'pip install "hub[clitest-extra]"' in table.stdout


def test_doctor_strict_fails_on_a_broken_plugin(invoke, monkeypatch):
    require("hub.registry")
    from hub.plugins import PluginInfo

    broken = PluginInfo("broken", "1.0", "broken.plugin", (), "ImportError: boom")
    real = hub.list_plugins
    monkeypatch.setattr(hub, "list_plugins", lambda: [*real(), broken])
    result = invoke("doctor")
    assert result.exit_code == 1  # a failed plugin fails the doctor, strict or not
    assert "plugin broken failed to load: ImportError: boom" in result.stdout
    assert invoke("doctor", "--strict").exit_code == 1
    assert json.loads(invoke("doctor", "--json").stdout)["ok"] is False


def test_doctor_survives_a_broken_plugin_system(invoke, monkeypatch):
    def explode():
        raise RuntimeError("the plugin system is broken")

    monkeypatch.setattr(hub, "list_plugins", explode, raising=False)
    result = invoke("doctor", "--json")
    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert data["ok"] is False
    assert any("the plugin system is broken" in p for p in data["problems"])


def test_mujoco_gl_report():
    assert mujoco_gl_report({"MUJOCO_GL": "egl"})["ok"]
    assert mujoco_gl_report({"MUJOCO_GL": "osmesa"})["advice"] is None
    bad = mujoco_gl_report({"MUJOCO_GL": "vulkan"})
    assert not bad["ok"] and "vulkan" in bad["advice"]
    assert "switched off" in mujoco_gl_report({"MUJOCO_GL": "off"})["advice"]
    assert mujoco_gl_report({"MUJOCO_GL": "glfw", "DISPLAY": ":0"})["advice"] is None


@pytest.mark.skipif(importlib.util.find_spec("Box2D") is not None, reason="Box2D is installed")
def test_doctor_lists_modules_some_envs_need_with_their_install_line(invoke):
    require("hub.registry")
    pytest.importorskip("gymnasium")
    data = json_of(invoke("doctor", "--json"))
    assert {
        "namespace": "gymnasium",
        "module": "Box2D",
        "install": 'pip install "gymnasium[box2d]"',
    } in data["env_dependencies"]
    table = invoke("doctor").stdout
    assert "modules some envs need, not installed" in table
    assert 'pip install "gymnasium[box2d]"' in table
    assert "No problem found." not in table or "module(s) that some envs need" in table
