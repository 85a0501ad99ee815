"""Connecting to Ray: a running cluster, or a local instance started on demand.

``address="auto"`` joins the cluster that ``ray start --head`` started on this machine,
``"ray://host:10001"`` or ``"host:6379"`` a remote one; ``None`` uses ``RAY_ADDRESS`` when it is
set, and otherwise starts a local instance (without the dashboard, so that it starts fast; its
workers at normal priority, not Ray's default niceness of 15, unless ``RAY_worker_niceness`` is
set).
A process that is already connected (``ray.init`` was called) keeps its connection.

Example:
    >>> started = connect(None)  # doctest: +SKIP
"""

from __future__ import annotations

import os

__all__ = ["connect"]


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
