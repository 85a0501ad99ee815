"""``hub rollout --record FILE``, with the in-memory ``clitest:Pixels`` env."""

from __future__ import annotations

import pytest

from .conftest import json_of, require_env

iio = pytest.importorskip("imageio.v3", reason="--record needs imageio (the 'all' extra)")


BAR = 24  # hub.media.tiles.BAR_HEIGHT


def tile_cells(frame, count, tile_h, tile_w):
    """The image parts of the first ``count`` tiles of a recorded frame (one row of tiles)."""
    top = 2 * BAR  # the title bar, then the tile's caption bar
    return [frame[top : top + tile_h, i * tile_w : (i + 1) * tile_w] for i in range(count)]


def test_record_gif_tiles_the_envs(invoke, test_plugin, tmp_path):
    out = tmp_path / "pixels.gif"
    data = json_of(
        invoke("rollout", "clitest:Pixels", "-n", "3", "-s", "12", "--record", str(out), "--json")
    )
    assert data["record"] == str(out)
    assert data["episodes"] == 6  # 3 envs, episodes of 5 steps, 12 steps
    frames = iio.imread(out, index=None)
    factor = 16  # 16 x 20 pixels: scaled 16 times, to 256 x 320
    tile_h, tile_w = test_plugin.HEIGHT * factor, test_plugin.WIDTH * factor
    assert frames.shape[1:3] == (2 * BAR + tile_h, 3 * tile_w)  # CHW pixels written as HWC
    assert frames.shape[0] == 13  # the reset frame and the 12 steps: every frame differs
    # the first frame is the reset frame (count 0), the colour grows with the count
    assert all((cell[..., :3] == 0).all() for cell in tile_cells(frames[0], 3, tile_h, tile_w))
    assert all((cell[..., :3] == 4 * 40).all() for cell in tile_cells(frames[4], 3, tile_h, tile_w))


def test_record_envs_and_record_every(invoke, test_plugin, tmp_path):
    out = tmp_path / "pixels.gif"
    args = ("rollout", "clitest:Pixels", "-n", "4", "-s", "8", "--record", str(out))
    result = invoke(*args, "--record-envs", "1,3", "--record-every", "2")
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)
    assert frames.shape[0] == 5  # steps 0, 2, 4, 6, 8
    assert frames.shape[2] == 2 * test_plugin.WIDTH * 16  # two tiles in a row
    result = invoke(*args, "--record-envs", "2")
    assert result.exit_code == 0, result.output
    assert iio.imread(out, index=None).shape[2] == 2 * test_plugin.WIDTH * 16


def test_record_envs_out_of_the_batch_is_an_error(invoke, test_plugin, tmp_path):
    out = tmp_path / "pixels.gif"
    args = ("rollout", "clitest:Pixels", "-n", "2", "-s", "2", "--record", str(out))
    result = invoke(*args, "--record-envs", "0,5")
    assert result.exit_code == 1
    assert "no env 5 in a batch of 2" in result.stderr
    assert not out.exists()


def test_record_mp4(invoke, test_plugin, tmp_path):
    pytest.importorskip("imageio_ffmpeg", reason="MP4 needs imageio-ffmpeg (the 'all' extra)")
    out = tmp_path / "pixels.mp4"
    result = invoke("rollout", "clitest:Pixels", "-n", "2", "-s", "5", "--record", str(out))
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)
    assert frames.shape == (6, 2 * BAR + 16 * test_plugin.HEIGHT, 2 * 16 * test_plugin.WIDTH, 3)


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
    assert frames.shape[1:] == (2 * BAR + 400, 600, 3)  # CartPole's 400 x 600 frame, one tile


def test_record_tiles_the_rendered_frames_of_a_gymnasium_vector_env(invoke, tmp_path, monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    require_env("gymnasium:CartPole-v1")
    out = tmp_path / "cartpole.gif"
    args = ("rollout", "gymnasium:CartPole-v1", "-n", "2", "-s", "3", "-k", "render_mode=rgb_array")
    result = invoke(*args, "--record", str(out))
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)
    assert frames.shape[1:] == (2 * BAR + 400, 2 * 600, 3)


def test_record_envpool_renders_full_size_colour_frames(invoke, tmp_path):
    require_env("envpool:Pong-v5")
    out = tmp_path / "pong.gif"
    args = ("rollout", "envpool:Pong-v5", "-n", "2", "-s", "3", "--seed", "0")
    result = invoke(*args, "-k", "render_mode=rgb_array", "--record", str(out))
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)[..., :3]
    assert frames.shape[1:] == (2 * BAR + 420, 2 * 320, 3)  # 210 x 160 RGB, scaled twice
    field = frames[-1, 2 * BAR + 200 : 2 * BAR + 400, :320]
    assert (field[..., 0] != field[..., 2]).any()  # colour, not grey


def test_record_envpool_without_render_mode_tiles_the_observations(invoke, tmp_path):
    require_env("envpool:Pong-v5")
    out = tmp_path / "pong.gif"
    args = ("rollout", "envpool:Pong-v5", "-n", "2", "-s", "2", "--seed", "0")
    result = invoke(*args, "--record", str(out))
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)[..., :3]
    assert frames.shape[1:] == (2 * BAR + 336, 2 * 336, 3)  # 84 x 84 grey, scaled 4 times


def test_record_draws_hubs_pendulum_without_pixel_observations(invoke, tmp_path):
    """The stateless Pendulum draws the data it is given (``render_frames(data)``): no
    ``from_pixels=True`` is needed to record it."""
    require_env("hub:Pendulum")
    out = tmp_path / "pendulum.gif"
    args = ("rollout", "hub:Pendulum", "-n", "2", "-s", "3", "-k", "pixels_size=32")
    result = invoke(*args, "--record", str(out))
    assert result.exit_code == 0, result.output
    frames = iio.imread(out, index=None)[..., :3]
    assert frames.shape == (4, 2 * BAR + 256, 2 * 256, 3)  # 32 x 32, scaled 8 times


def test_record_renders_dm_control_without_pixel_observations(invoke, tmp_path):
    """dm_control envs render on demand (``render_frames``): no ``from_pixels=True`` needed."""
    require_env("dm_control:cartpole/balance")
    out = tmp_path / "cartpole.gif"
    size = ("-k", "height=64", "-k", "width=80")
    result = invoke(
        "rollout", "dm_control:cartpole/balance", "-s", "2", *size, "--record", str(out)
    )
    assert result.exit_code == 0, result.output
    assert iio.imread(out, index=None).shape[1:3] == (2 * BAR + 64 * 4, 80 * 4)
