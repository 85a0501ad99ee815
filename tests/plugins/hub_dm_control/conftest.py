"""The hub_dm_control tests run against the installed dm_control with headless EGL rendering.

MUJOCO_GL is read when dm_control (or mujoco) is imported, so it is set here, before any test
module imports them (the Makefile and the tox envs set it too).
"""

import os

os.environ.setdefault("MUJOCO_GL", "egl")
