"""Pixels through MuJoCo's renderer (EGL here), and the error where no OpenGL backend exists."""

from __future__ import annotations

import os
import subprocess
import sys

import torch

import hub
from tests.plugins.hub_dm_control.dmc_helpers import make, needs_dmc, needs_gl

pytestmark = needs_dmc


@needs_gl
def test_from_pixels_gives_uint8_frames() -> None:
    env = make("cheetah/run", seed=0, from_pixels=True, height=48, width=64)
    spec = env.observation_spec["pixels"]
    assert spec.shape == torch.Size([48, 64, 3]) and spec.dtype == torch.uint8
    hub.check_env_specs(env)
    data = env.rollout(3)
    pixels = data["next", "pixels"]
    assert pixels.shape == torch.Size([3, 48, 64, 3]) and pixels.dtype == torch.uint8
    assert pixels.float().std() > 0  # a real image, not a blank buffer
    assert "position" in data.keys()
    env.close()


@needs_gl
def test_pixels_only_keeps_pixels_and_discount() -> None:
    env = make("cartpole/swingup", from_pixels=True, pixels_only=True, height=32, width=32)
    assert sorted(env.observation_keys) == ["discount", "pixels"]
    assert env.reset()["pixels"].shape == torch.Size([32, 32, 3])
    env.close()


@needs_gl
def test_frames_follow_the_seed_and_the_camera() -> None:
    first = make("walker/walk", seed=2, from_pixels=True, height=32, width=32).reset()["pixels"]
    again = make("walker/walk", seed=2, from_pixels=True, height=32, width=32).reset()["pixels"]
    other = make("walker/walk", seed=2, from_pixels=True, height=32, width=32, camera_id=1)
    assert torch.equal(first, again)
    assert not torch.equal(first, other.reset()["pixels"])


def _run(code: str, gl: str | None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("MUJOCO_GL", "DISPLAY")}
    if gl is not None:
        env["MUJOCO_GL"] = gl
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300
    )


# The env's own path to the renderer, without torch (a quick child process): the suite's import
# and the first frame, as DMControlEnv(from_pixels=True) does them.
_LIGHT = """
from hub_dm_control.compat import import_suite
from hub_dm_control.rendering import RenderingUnavailableError, make_frame_reader
try:
    physics = import_suite().load("cartpole", "balance").physics
    make_frame_reader(physics, height=32, width=32, camera_id=0)
except RenderingUnavailableError as err:
    print("ERROR:", err)
else:
    print("RENDERED")
"""


def test_no_gl_backend_is_a_clear_error() -> None:
    """MUJOCO_GL=disable: envs without pixels run; from_pixels=True is a clear error."""
    code = (
        "import hub\n"
        "from hub_dm_control import DMControlEnv, RenderingUnavailableError\n"
        "print(hub.make_env('dm_control:cartpole/balance').rollout(3).shape)\n"
        "try:\n"
        "    DMControlEnv('cartpole', 'balance', from_pixels=True)\n"
        "except RenderingUnavailableError as err:\n"
        "    assert isinstance(err, hub.errors.HubError)\n"
        "    print('ERROR:', err)\n"
    )
    out = _run(code, "disable")
    assert out.returncode == 0, out.stderr
    assert "torch.Size([3])" in out.stdout
    assert "ERROR: MuJoCo cannot render pixels" in out.stdout, out.stdout + out.stderr
    assert "MUJOCO_GL=egl" in out.stdout and "libegl1 libegl-mesa0 libgl1-mesa-dri" in out.stdout
    assert "MUJOCO_GL is 'disable'" in out.stdout  # the user's choice is kept


def test_unset_gl_without_display_gets_a_headless_backend_quietly() -> None:
    """No MUJOCO_GL and no display: hub sets a headless backend before importing dm_control,
    so frames render and GLFW prints nothing (it used to print a GLFWError on every import)."""
    from hub_dm_control.headless import headless_backend

    out = _run(_LIGHT + "import os; print('MUJOCO_GL:', os.environ['MUJOCO_GL'])\n", None)
    assert out.returncode == 0, out.stderr
    assert f"MUJOCO_GL: {headless_backend()}" in out.stdout
    if headless_backend() == "egl":  # this project's machines
        assert "RENDERED" in out.stdout, out.stdout + out.stderr
    assert "GLFW" not in out.stderr, out.stderr


def test_unknown_gl_value_is_a_clear_error() -> None:
    out = _run(_LIGHT, "bogus")
    assert out.returncode == 0, out.stderr
    assert "ERROR: MuJoCo cannot import dm_control" in out.stdout, out.stdout + out.stderr
    assert "'bogus'" in out.stdout
