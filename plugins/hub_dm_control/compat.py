"""dm_control and mujoco version differences, one :func:`hub.implement_for` function each.

Measured on the two pairs that install here (dm_control 1.0.50 + mujoco 3.17.0 and dm_control
1.0.20 + mujoco 3.1.6; see ``docs/dm_control.md``):

* :func:`check_runtime`: dm_control up to 1.0.50 does not work with mujoco 4 (``suite.load``
  fails with ``AttributeError: 'MjModel' object has no attribute 'flex_vertedge'``, or
  ``'flex_evpair'`` on 1.0.20), and ``pip install dm-control`` alone pulls mujoco 4. hub refuses
  that pair up front with the command that fixes it.
* :func:`check_numpy`: dm_control before 1.0.21 indexes named MuJoCo fields with
  ``np.array(key, copy=False)``, which numpy 2 refuses (``ValueError: Unable to avoid copy while
  creating an array as requested``) in most tasks' observations and rewards (cartpole, walker,
  humanoid...; cheetah happens to escape it). hub refuses that pair up front with the fix.
* :func:`suite_tasks` and :func:`load`: the suite's API (``ALL_TASKS``, ``suite.load`` with
  ``task_kwargs``, ``environment_kwargs`` and ``visualize_reward``) is the same from 1.0 on;
  before 1.0, dm_control used MuJoCo 2.0 through its own ctypes bindings, which hub does not
  support (the dispatcher says so, naming the installed version).
* :func:`free_physics`: ``Physics.free()`` deletes its data unguarded before 1.0.50, so a second
  call raises ``AttributeError``; from 1.0.50 it may be called twice.

Example:
    >>> [impl.range for impl in check_runtime.implementations]
    ['<4.0', '>=4.0']
    >>> ("cheetah", "run") in suite_tasks()
    True
"""

from __future__ import annotations

from typing import Any

import hub
from hub_dm_control.headless import choose_gl_backend
from hub_dm_control.rendering import gl_error, is_gl_failure

__all__ = [
    "check_runtime",
    "check_numpy",
    "suite_tasks",
    "load",
    "free_physics",
    "import_suite",
]

#: the newest dm_control known to break with mujoco 4
LAST_CHECKED_DM_CONTROL = "1.0.50"


@hub.implement_for("mujoco", None, "4.0")
def check_runtime() -> None:
    """mujoco 3.x (and the 2.x of older dm_control releases): every dm_control 1.0 works."""


@check_runtime.register(from_version="4.0")
def _() -> None:
    """mujoco 4: dm_control up to 1.0.50 fails in ``suite.load``; refuse it with the fix."""
    from packaging.version import Version

    dm_version = hub.dispatch.module_version("dm_control")
    if dm_version is not None and dm_version > Version(LAST_CHECKED_DM_CONTROL):
        return  # a newer dm_control may support mujoco 4: let it try
    mj_version = hub.dispatch.module_version("mujoco")
    raise hub.errors.MissingDependencyError(
        "mujoco<4",
        extra="dm-control",
        message=(
            f"dm_control {dm_version} does not work with mujoco {mj_version} (loading a task "
            "fails with AttributeError: 'MjModel' object has no attribute 'flex_vertedge'). "
            "Install the mujoco it was released with, e.g. "
            'pip install "dm-control==1.0.50" "mujoco==3.17.0", or pip install "hub[dm-control]".'
        ),
    )


@hub.implement_for("dm_control", "1.0", "1.0.21")
def check_numpy() -> None:
    """dm_control < 1.0.21: named indexing breaks with numpy 2; refuse that pair with the fix."""
    import numpy

    if int(numpy.__version__.split(".")[0]) < 2:
        return
    dm_version = hub.dispatch.module_version("dm_control")
    raise hub.errors.MissingDependencyError(
        "numpy<2",
        extra="dm-control",
        message=(
            f"dm_control {dm_version} does not work with numpy {numpy.__version__}: most tasks "
            "fail with ValueError: Unable to avoid copy while creating an array as requested "
            '(dm_control fixed it in 1.0.21). Install numpy 1.x: pip install "numpy<2", or a '
            'newer dm_control: pip install "dm-control>=1.0.21".'
        ),
    )


@check_numpy.register(from_version="1.0.21")
def _() -> None:
    """dm_control >= 1.0.21 works with numpy 1 and 2."""


def import_suite() -> Any:
    """``dm_control.suite``, with a failure of dm_control's OpenGL set-up reported as such.

    dm_control chooses its OpenGL backend from ``MUJOCO_GL`` when it is imported, and raises
    there when the backend named is missing or unknown; a headless process that set none gets
    one first (:func:`hub_dm_control.headless.choose_gl_backend`).

    Example:
        >>> import_suite().__name__
        'dm_control.suite'
    """
    choose_gl_backend()
    try:
        from dm_control import suite
    except ImportError as exc:
        if exc.name in ("dm_control", "mujoco", "dm_env"):
            raise hub.errors.MissingDependencyError(exc.name, extra="dm-control") from exc
        if is_gl_failure(exc):
            raise gl_error(exc, what="import dm_control") from exc
        raise
    except (RuntimeError, AttributeError, OSError) as exc:
        if is_gl_failure(exc):
            raise gl_error(exc, what="import dm_control") from exc
        raise
    return suite


@hub.implement_for("dm_control", "1.0")
def suite_tasks() -> list[tuple[str, str]]:
    """Every ``(domain, task)`` of the suite: ``suite.ALL_TASKS`` (dm_control >= 1.0)."""
    return [(str(d), str(t)) for d, t in import_suite().ALL_TASKS]


@hub.implement_for("dm_control", "1.0")
def load(domain: str, task: str, **kwargs: Any) -> Any:
    """``suite.load(domain, task, task_kwargs=, environment_kwargs=, visualize_reward=)``
    (dm_control >= 1.0), after :func:`check_runtime` and :func:`check_numpy`."""
    check_runtime()
    check_numpy()
    return import_suite().load(domain, task, **kwargs)


@hub.implement_for("dm_control", "1.0", "1.0.50")
def free_physics(physics: Any) -> None:
    """dm_control < 1.0.50: ``free()`` fails when called twice, so call it once only."""
    if not getattr(physics, "_hub_freed", False):
        physics.free()
        physics._hub_freed = True


@free_physics.register(from_version="1.0.50")
def _(physics: Any) -> None:
    """dm_control >= 1.0.50: ``free()`` may be called any number of times."""
    physics.free()
