"""``hub rollout URI``."""

from __future__ import annotations

import math

import pytest

from hub.cli import rollout as rollout_module

from .conftest import json_of, require_env

CONTRACT_KEYS = {
    "uri",
    "num_envs",
    "steps",
    "env_steps",
    "seconds",
    "steps_per_s",
    "episodes",
    "mean_return",
}


@pytest.fixture
def pendulum():
    require_env("hub:Pendulum")


def test_rollout_json_single_env(invoke, pendulum):
    data = json_of(invoke("rollout", "hub:Pendulum", "--steps", "50", "--json"))
    assert CONTRACT_KEYS <= set(data)
    assert data["uri"] == "hub:Pendulum"
    assert (data["num_envs"], data["steps"], data["env_steps"]) == (1, 50, 50)
    assert data["batch_size"] == []
    assert data["seconds"] > 0 and data["steps_per_s"] > 0
    assert data["episodes"] == 0 and data["mean_return"] is None  # Pendulum runs 200 steps
    assert data["interrupted"] is False


def test_rollout_json_four_envs(invoke, pendulum):
    data = json_of(invoke("rollout", "hub:Pendulum", "--steps", "210", "-n", "4", "--json"))
    assert (data["num_envs"], data["steps"], data["env_steps"]) == (4, 210, 840)
    assert data["batch_size"] == [4]
    assert data["episodes"] == 4  # each env ends one 200-step episode
    assert data["mean_length"] == 200
    assert data["min_return"] <= data["mean_return"] <= data["max_return"] <= 0
    assert math.isclose(data["steps_per_s"], data["env_steps"] / data["seconds"], rel_tol=1e-3)


def test_rollout_counting_counts_episodes_and_returns(invoke):
    require_env("hub:Counting")
    data = json_of(
        invoke("rollout", "hub:Counting", "--steps", "100", "--json", "-k", "max_steps=5")
    )
    assert data["episodes"] == 20
    assert data["mean_length"] == 5
    # the action (0 or 1) is the reward: a return is between 0 and the episode length
    assert 0 <= data["min_return"] <= data["max_return"] <= 5


def test_rollout_counting_table(invoke):
    require_env("hub:Counting")
    result = invoke("rollout", "hub:Counting", "--steps", "30", "--seed", "3")
    assert result.exit_code == 0, result.output
    out = result.stdout
    for label in ("steps/s", "episodes", "mean return", "min / max return", "env steps"):
        assert label in out
    assert "rollout hub:Counting" in out
    assert result.stderr == ""  # no progress bar off a terminal


def test_rollout_seed_makes_returns_repeatable(invoke, pendulum):
    args = ("rollout", "hub:Pendulum", "--steps", "200", "--seed", "7", "--json")
    first, second = json_of(invoke(*args)), json_of(invoke(*args))
    assert first["mean_return"] == second["mean_return"]


def test_rollout_serial_batching(invoke, pendulum):
    data = json_of(
        invoke("rollout", "hub:Pendulum", "-n", "2", "--batching", "serial", "-s", "5", "--json")
    )
    assert data["env_steps"] == 10 and data["batching"] == "serial"


def test_rollout_nested_multi_agent_env(invoke):
    require_env("hub:MultiAgentCounting")
    data = json_of(invoke("rollout", "hub:MultiAgentCounting", "-n", "2", "-s", "20", "--json"))
    assert data["env_steps"] == 40


def test_rollout_unknown_namespace(invoke):
    require_env("hub:Counting")
    result = invoke("rollout", "nosuchns:Thing", "--steps", "5")
    assert result.exit_code == 1
    assert "nosuchns" in result.stderr
    assert "Traceback" not in result.output


def test_rollout_unknown_env_suggests(invoke, pendulum):
    result = invoke("rollout", "hub:Pendulm")
    assert result.exit_code == 1
    assert "hub:Pendulum" in result.stderr


def test_rollout_bad_batching_is_clean(invoke, pendulum):
    result = invoke("rollout", "hub:Pendulum", "--batching", "serial")
    assert result.exit_code == 1
    assert "num_envs" in result.stderr and "Traceback" not in result.output


def test_rollout_bad_kwarg_is_clean(invoke, pendulum):
    result = invoke("rollout", "hub:Pendulum", "-k", "no_such_option=1")
    assert result.exit_code == 1
    assert "no_such_option" in result.stderr


def test_rollout_closes_the_env(invoke, pendulum, monkeypatch):
    import hub

    closed = []
    real_make = hub.make_env

    def make_env(uri, **kwargs):
        env = real_make(uri, **kwargs)
        close = env.close
        env.close = lambda: (closed.append(uri), close())
        return env

    monkeypatch.setattr(hub, "make_env", make_env)
    json_of(invoke("rollout", "hub:Pendulum", "--steps", "3", "--json"))
    assert closed == ["hub:Pendulum"]


def test_ctrl_c_prints_the_partial_summary_and_closes(invoke, pendulum, monkeypatch):
    import hub

    closed = []
    real_make = hub.make_env

    def make_env(uri, **kwargs):
        env = real_make(uri, **kwargs)
        step = env.step_and_maybe_reset
        calls = []

        def interrupted_step(td):
            calls.append(1)
            if len(calls) == 4:
                raise KeyboardInterrupt
            return step(td)

        env.step_and_maybe_reset = interrupted_step
        close = env.close
        env.close = lambda: (closed.append(uri), close())
        return env

    monkeypatch.setattr(hub, "make_env", make_env)
    result = invoke("rollout", "hub:Pendulum", "--steps", "100", "--json")
    assert result.exit_code == rollout_module.INTERRUPTED_EXIT_CODE
    assert closed == ["hub:Pendulum"]
    import json

    data = json.loads(result.stdout)
    assert data["interrupted"] is True and data["steps"] == 3


@pytest.mark.parametrize("width", [80, 100, 160])
@pytest.mark.parametrize("uri", ["envpool:Pong-v5", "dm_control:cartpole/swingup"])
def test_the_progress_bar_keeps_its_figures_whole_on_a_narrow_terminal(monkeypatch, width, uri):
    """At 80 columns the bar used to cut "3000" to "30…" (and the times to "0:00:…")."""
    import io
    import re

    from rich.console import Console

    from hub.cli import output
    from hub.cli.progress import rollout_progress

    screen = io.StringIO()
    console = Console(file=screen, width=width, force_terminal=True, color_system=None)
    monkeypatch.setattr(output, "console", lambda stderr=False: console)
    with rollout_progress(uri, 3000, enabled=True, num_envs=8) as on_progress:
        on_progress(1500, 17)
    lines = [line for line in re.split(r"\x1b\[[0-9;?]*[A-Za-z]|\n", screen.getvalue()) if line]
    text = "\n".join(lines)
    assert "…" not in text
    assert "1500/3000" in text and " env-steps/s 17 episodes " in text and " eta " in text
    assert uri in text  # on the bar's line, or above it when the line has no room
    assert max(len(line) for line in lines) <= width
