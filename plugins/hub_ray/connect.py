"""Connecting to Ray: a running cluster, or a local instance started on demand.

``address="auto"`` joins the cluster that ``ray start --head`` started on this machine,
``"ray://host:10001"`` or ``"host:6379"`` a remote one; ``None`` uses ``RAY_ADDRESS`` when it is
set, and otherwise starts a local instance (without the dashboard, so that it starts fast; its
workers at normal priority, not Ray's default niceness of 15, unless ``RAY_worker_niceness`` is
set).
A process that is already connected (``ray.init`` was called) keeps its connection.

A ``RayEnv``'s actors live in the Ray instance it was made in. Once that instance is gone
(``ray.shutdown()``, perhaps followed by a new ``ray.init()``), any Ray call would start a new
local instance on its own (several seconds) and then fail with Ray's bare ``Exception: Failed
to submit task to actor``: :func:`check_session` raises :class:`RayShutdownError` first.

Example:
    >>> started = connect(None)  # doctest: +SKIP
    >>> check_session(ray_session(), "step")  # doctest: +SKIP
"""

from __future__ import annotations

import os

import hub

__all__ = ["RayShutdownError", "check_session", "connect", "ray_session", "same_session"]


class RayShutdownError(hub.errors.WorkerError):
    """The Ray instance that held a ``RayEnv``'s actors was shut down."""


def connect(address: str | None) -> bool:
    """Make sure this process is connected to Ray; ``True`` when this call connected it."""
    import ray

    if ray.is_initialized():
        return False
    if address is None:
        address = os.environ.get("RAY_ADDRESS") or None
    if address is None:
        # Ray runs its workers at niceness 15 by default; the actors are this env's main work,
        # so they run at the priority of ParallelEnv's workers unless the user says otherwise
        os.environ.setdefault("RAY_worker_niceness", "0")
        ray.init(address="local", include_dashboard=False, logging_level="warning")
    else:
        ray.init(address=address, logging_level="warning")
    return True


def ray_session() -> str | None:
    """The Ray instance this process is connected to (the id of its node), or ``None``."""
    import ray

    if not ray.is_initialized():
        return None
    try:
        return str(ray.get_runtime_context().get_node_id())
    except Exception:  # a client connection without a node id: nothing to compare
        return None


def same_session(session: str | None) -> bool:
    """Whether this process is still connected to the Ray instance ``session`` names."""
    import ray

    if not ray.is_initialized():
        return False
    return session is None or ray_session() in (None, session)


def check_session(session: str | None, what: str) -> None:
    """Raise :class:`RayShutdownError` unless this process is still connected to the Ray
    instance ``session`` (:func:`ray_session` when the env was made), before a Ray call would
    start a new one.
    """
    import ray

    if same_session(session):
        return
    if not ray.is_initialized():
        happened = "Ray was shut down (ray.shutdown())"
    else:
        happened = "Ray was shut down and started again (ray.init())"
    raise RayShutdownError(
        f"{what}() on a RayEnv whose Ray instance is gone: {happened} while the env was open, "
        "and its actors went with it. hub does not start a new Ray instance for them. Close "
        "this env and build a new one (make_env(..., batching='ray') connects again); "
        "shut Ray down after env.close()."
    )
