"""``hub info URI``."""

from __future__ import annotations

from .conftest import json_of, require_env


def test_info_json_pendulum(invoke):
    require_env("hub:Pendulum")
    data = json_of(invoke("info", "hub:Pendulum", "--json"))
    assert data["uri"] == "hub:Pendulum"
    assert data["batch_size"] == []
    assert data["env_class"].endswith("PendulumEnv")
    assert data["namespace"]["name"] == "hub"
    assert data["namespace"]["plugin"]["name"] == "hub"
    assert set(data["specs"]) == {"observation", "action", "reward", "done", "state"}
    action = data["specs"]["action"]
    assert action == [
        {
            "key": ["action"],
            "class": "Bounded",
            "shape": [1],
            "dtype": "float32",
            "low": -2.0,
            "high": 2.0,
        }
    ]
    done_keys = {tuple(row["key"]) for row in data["specs"]["done"]}
    assert {("done",), ("terminated",), ("truncated",)} <= done_keys
    assert isinstance(data["dispatch"]["functions"], list)
    assert isinstance(data["dispatch"]["families"], list)


def test_info_batched_shapes_start_with_the_batch(invoke):
    require_env("hub:Pendulum")
    data = json_of(invoke("info", "hub:Pendulum", "-n", "3", "--json"))
    assert data["batch_size"] == [3]
    assert all(row["shape"][0] == 3 for rows in data["specs"].values() for row in rows)


def test_info_nested_keys(invoke):
    require_env("hub:MultiAgentCounting")
    data = json_of(invoke("info", "hub:MultiAgentCounting", "--json"))
    assert ["agents", "action"] in [row["key"] for row in data["specs"]["action"]]


def test_info_table(invoke):
    require_env("hub:Pendulum")
    result = invoke("info", "hub:Pendulum")
    assert result.exit_code == 0, result.output
    for text in ("PendulumEnv", "batch size []", "observation", "Bounded", "[-2, 2]"):
        assert text in result.stdout
    assert "version dispatch" in result.stdout


def test_info_shows_dispatch_and_backend(invoke, test_plugin):
    data = json_of(invoke("info", "clitest:Pixels", "--json"))
    assert data["namespace"]["plugin"] == {
        "name": test_plugin.NAME,
        "version": "9.9",
        "module": test_plugin.__name__,
    }
    assert data["backends"][0]["module"] == "packaging"
    assert data["backends"][0]["installed"] is True
    names = [fn["name"] for fn in data["dispatch"]["functions"]]
    name = f"{test_plugin.__name__}.packaging_flavour"
    assert name in names
    flavour = next(fn for fn in data["dispatch"]["functions"] if fn["name"] == name)
    assert flavour["runs"] == "packaging >=1"
    assert [impl["runs"] for impl in flavour["implementations"]] == [False, True]
    assert flavour["why"] and "packaging" in flavour["why"]

    table = invoke("info", "clitest:Pixels", "--explain")
    assert table.exit_code == 0, table.output
    assert "packaging_flavour -> packaging >=1 (of 2)" in table.stdout
    assert "All implementations" in table.stdout


def test_info_unknown_namespace(invoke):
    require_env("hub:Pendulum")
    result = invoke("info", "nosuchns:Thing", "--json")
    assert result.exit_code == 1
    assert "nosuchns" in result.stderr and result.stdout == ""


def test_info_bare_id_resolves_its_namespace(invoke):
    require_env("hub:Pendulum")
    data = json_of(invoke("info", "Pendulum", "--json"))
    assert data["namespace"]["name"] == "hub" and data["env_id"] == "Pendulum"
