"""``hub rollout --record FILE``, with the in-memory ``clitest:Pixels`` env."""

from __future__ import annotations

import pytest

from .conftest import json_of, require_env

iio = pytest.importorskip("imageio.v3", reason="--record needs imageio (the 'all' extra)")


def test_record_gif_of_the_first_env(invoke, test_plugin, tmp_path):
    out = tmp_path / "pixels.gif"
    data = json_of(
        invoke("rollout", "clitest:Pixels", "-n", "3", "-s", "12", "--record", str(out), "--json")
    )
    assert data["record"] == str(out)
    assert data["episodes"] == 6  # 3 envs, episodes of 5 steps, 12 steps
    frames = iio.imread(out, index=None)
    height, width = test_plugin.HEIGHT, test_plugin.WIDTH
    assert frames.shape[1:3] == (height, width)  # CHW pixels written as HWC
    assert frames.shape[0] >= 2  # the reset frame and the steps (GIF may merge equal frames)
    # the first frame is the reset frame (count 0), the colour grows with the count
    assert frames[0].max() == 0
    assert frames.max() == 5 * 40


def test_record_table_mentions_the_file(invoke, test_plugin, tmp_path):
    out = tmp_path / "pixels.gif"
    result = invoke("rollout", "clitest:Pixels", "-s", "3", "--record", str(out))
    assert result.exit_code == 0, result.output
    assert "recorded" in result.stdout and out.exists()


def test_record_env_without_frames_says_what_to_pass(invoke, tmp_path):
    require_env("hub:Counting")
    out = tmp_path / "counting.gif"
    result = invoke("rollout", "hub:Counting", "-s", "3", "--record", str(out))
    assert result.exit_code == 1
    assert "gives no frames" in result.stderr
    assert "from_pixels=True" in result.stderr
    assert not out.exists()


def test_record_bad_suffix_fails_before_building(invoke, tmp_path, monkeypatch):
    import hub

    monkeypatch.setattr(hub, "make_env", lambda *a, **k: pytest.fail("built the env"))
    result = invoke("rollout", "hub:Pendulum", "--record", str(tmp_path / "x.png"))
    assert result.exit_code == 1
    assert ".gif or .mp4" in result.stderr


def test_record_from_render_of_a_gymnasium_env(invoke, tmp_path, monkeypatch):
    """render() is only called after the first reset (gymnasium refuses it before)."""
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    require_env("gymnasium:CartPole-v1")
    out = tmp_path / "cartpole.gif"
    args = ("rollout", "gymnasium:CartPole-v1", "-s", "4", "-k", "render_mode=rgb_array")
    data = json_of(invoke(*args, "--record", str(out), "--json"))
    assert data["record"] == str(out)
    frames = iio.imread(out, index=None)
    assert frames.ndim == 4 and frames.shape[-1] == 3
