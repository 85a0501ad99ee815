"""Pixels through MuJoCo's renderer, and a clear error where no OpenGL backend exists.

MuJoCo renders through an OpenGL backend that ``dm_control`` and ``mujoco`` choose, **when they
are imported**, from the ``MUJOCO_GL`` environment variable: ``egl`` (headless: a GPU, or Mesa's
software EGL), ``osmesa`` (headless software rendering, slower; also set
``PYOPENGL_PLATFORM=osmesa``) or ``glfw`` (needs a display). On a headless Debian machine,
``MUJOCO_GL=egl`` with ``apt-get install -y libegl1 libegl-mesa0 libgl1-mesa-dri`` works.

Where rendering is impossible, :func:`gl_error` turns the backend's failure (a ``RuntimeError``,
a ``mujoco.FatalError``, an ``AttributeError`` from PyOpenGL...) into a
:class:`RenderingUnavailableError` that says which ``MUJOCO_GL`` value and packages make it work.

Example:
    >>> err = gl_error(RuntimeError("No OpenGL rendering backend is available."), gl="disable")
    >>> isinstance(err, hub.errors.HubError), "MUJOCO_GL=egl" in str(err)
    (True, True)
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import numpy as np

import hub

__all__ = [
    "RenderingUnavailableError",
    "EGL_PACKAGES",
    "OSMESA_PACKAGES",
    "gl_error",
    "is_gl_failure",
    "make_frame_reader",
]

#: the Debian packages of Mesa's EGL (enough for ``MUJOCO_GL=egl`` without a GPU)
EGL_PACKAGES = ("libegl1", "libegl-mesa0", "libgl1-mesa-dri")
#: the Debian package of OSMesa (``MUJOCO_GL=osmesa``)
OSMESA_PACKAGES = ("libosmesa6",)

# words that the GL backends' failures hold (dm_control, mujoco, PyOpenGL, GLFW)
_GL_MARKERS = (
    "opengl",
    "egl",
    "osmesa",
    "glfw",
    "mujoco_gl",
    "glgeterror",
    "display",
    "gl context",
    "rendering backend",
    "platform library",
)


class RenderingUnavailableError(hub.errors.MissingDependencyError):
    """MuJoCo cannot render in this process: no OpenGL backend is available.

    Attributes:
        gl: the value of ``MUJOCO_GL`` (``None`` when it is not set).
        install_line: the ``apt-get`` command that installs Mesa's EGL.
    """

    def __init__(self, message: str, *, gl: str | None) -> None:
        super().__init__("libEGL", message=message)
        self.gl = gl
        self.install_line = "apt-get install -y " + " ".join(EGL_PACKAGES)


def is_gl_failure(exc: BaseException) -> bool:
    """Whether ``exc`` comes from a missing or broken OpenGL backend (not, say, a bad camera).

    Example:
        >>> is_gl_failure(RuntimeError("No OpenGL rendering backend is available."))
        True
        >>> is_gl_failure(ValueError("camera_id 7 is out of range"))
        False
    """
    text = f"{type(exc).__module__}.{type(exc).__name__}: {exc}".lower()
    return any(marker in text for marker in _GL_MARKERS)


def gl_error(
    exc: BaseException, *, gl: str | None = None, what: str = "render pixels"
) -> RenderingUnavailableError:
    """The error to raise (``from exc``) when MuJoCo could not ``what`` for lack of OpenGL.

    ``gl`` defaults to the current ``MUJOCO_GL``.

    Example:
        >>> print(str(gl_error(RuntimeError("no backend"), gl="egl")).splitlines()[1])
        MUJOCO_GL is 'egl' in this process.
    """
    if gl is None:
        gl = os.environ.get("MUJOCO_GL")
    current = f"MUJOCO_GL is {gl!r} in this process." if gl else "MUJOCO_GL is not set."
    egl = " ".join(EGL_PACKAGES)
    osmesa = " ".join(OSMESA_PACKAGES)
    lines = [
        f"MuJoCo cannot {what}: its OpenGL backend is missing or failed "
        f"({type(exc).__name__}: {exc}).",
        current,
        "Choose a backend with the MUJOCO_GL environment variable, set before Python imports "
        "dm_control or mujoco (e.g. `MUJOCO_GL=egl python train.py`):",
        f"  - MUJOCO_GL=egl: headless, on a GPU or Mesa's software EGL. On Debian/Ubuntu: "
        f"apt-get install -y {egl}",
        f"  - MUJOCO_GL=osmesa (with PYOPENGL_PLATFORM=osmesa): headless software rendering, "
        f"slower. On Debian/Ubuntu: apt-get install -y {osmesa}",
        "  - MUJOCO_GL=glfw: needs a display (a desktop session, or `xvfb-run -a python ...`).",
        "Envs without pixels (from_pixels=False) need none of these: MUJOCO_GL=disable runs "
        "them anywhere.",
    ]
    if gl == "egl":
        lines.insert(2, f"EGL was chosen but failed: install {egl}, or try MUJOCO_GL=osmesa.")
    elif gl == "osmesa":
        lines.insert(
            2,
            f"OSMesa was chosen but failed: install {osmesa} and set PYOPENGL_PLATFORM=osmesa "
            "too, or try MUJOCO_GL=egl.",
        )
    return RenderingUnavailableError("\n".join(lines), gl=gl)


def make_frame_reader(
    physics: Any, *, height: int, width: int, camera_id: int | str
) -> Callable[[], np.ndarray]:
    """A function that renders one RGB frame ``uint8 [height, width, 3]`` of ``physics``.

    The first frame is rendered here, so that a missing OpenGL backend is reported when the env
    is built (as :class:`RenderingUnavailableError`), not in the middle of a rollout. Frames are
    fresh, contiguous arrays (dm_control returns a flipped view of its buffer).

    Example:
        >>> from dm_control import suite
        >>> read = make_frame_reader(suite.load("cartpole", "balance").physics, height=32,
        ...                          width=48, camera_id=0)
        >>> read().shape, read().dtype
        ((32, 48, 3), dtype('uint8'))
    """
    render = physics.render

    def read() -> np.ndarray:
        return np.ascontiguousarray(render(height=height, width=width, camera_id=camera_id))

    try:
        read()
    except Exception as exc:
        if is_gl_failure(exc):
            raise gl_error(exc) from exc
        raise
    return read
