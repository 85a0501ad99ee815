"""A headless OpenGL backend for dm_control when ``MUJOCO_GL`` is not set and there is no display.

dm_control chooses its OpenGL backend once, when it is imported: from ``MUJOCO_GL``, or else by
trying GLFW first. Without a display (a server, a container, CI), GLFW prints
``GLFWError: (65550) X11: The DISPLAY environment variable is missing`` on every import and
pixels fail. So before hub imports dm_control, :func:`choose_gl_backend` sets ``MUJOCO_GL`` for
such a process: ``egl`` when ``libEGL`` is installed (a GPU, or Mesa's software EGL), else
``osmesa`` when ``libOSMesa`` is (with ``PYOPENGL_PLATFORM=osmesa``), else ``disable`` (envs
without pixels work; pixels raise :class:`hub_dm_control.RenderingUnavailableError` with the
packages to install).

It changes nothing when ``MUJOCO_GL`` is set (even to an empty value: the user chose), when
there is a display (``DISPLAY`` or ``WAYLAND_DISPLAY``), outside Linux (macOS and Windows have
their own window systems), or once dm_control is imported (its choice is made).

Example:
    >>> environ = {}
    >>> choose_gl_backend(environ, platform="linux", imported=False) == environ["MUJOCO_GL"]
    True
    >>> choose_gl_backend({"MUJOCO_GL": "glfw"}, platform="linux", imported=False) is None
    True
    >>> choose_gl_backend({"DISPLAY": ":0"}, platform="linux", imported=False) is None
    True
"""

from __future__ import annotations

import ctypes.util
import os
import sys
from collections.abc import MutableMapping

__all__ = ["choose_gl_backend", "headless_backend"]


def headless_backend() -> str:
    """``"egl"``, ``"osmesa"`` or ``"disable"``: the first whose library is installed.

    Example:
        >>> headless_backend() in ("egl", "osmesa", "disable")
        True
    """
    if ctypes.util.find_library("EGL"):
        return "egl"
    if ctypes.util.find_library("OSMesa"):
        return "osmesa"
    return "disable"


def choose_gl_backend(
    environ: MutableMapping[str, str] | None = None,
    *,
    platform: str | None = None,
    imported: bool | None = None,
) -> str | None:
    """Set ``MUJOCO_GL`` in ``environ`` (``os.environ``) for a headless Linux process that has
    not chosen one; returns the value set, or ``None`` when it left things as they were.

    Args:
        environ: the environment to read and change.
        platform: ``sys.platform`` by default.
        imported: whether dm_control's renderer is imported already (then it is too late);
            read from ``sys.modules`` by default.
    """
    environ = os.environ if environ is None else environ
    platform = sys.platform if platform is None else platform
    if imported is None:
        imported = "dm_control._render" in sys.modules
    if "MUJOCO_GL" in environ or imported or not platform.startswith("linux"):
        return None
    if environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"):
        return None
    choice = headless_backend()
    environ["MUJOCO_GL"] = choice
    if choice == "osmesa":
        environ.setdefault("PYOPENGL_PLATFORM", "osmesa")
    return choice
