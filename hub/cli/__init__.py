"""The ``hub`` command line: ``plugins``, ``envs``, ``info``, ``rollout``, ``bench``, ``serve``,
``new-plugin``, ``doctor``.

``hub`` (the console script) and ``python -m hub`` both call :func:`main`. Every command takes
``--json`` for scripts. Commands import torch, the registry and rich inside their bodies, so that
``hub --help`` starts fast.

Example:
    >>> from click.testing import CliRunner
    >>> from hub.cli import cli
    >>> "rollout" in CliRunner().invoke(cli, ["--help"]).output
    True
"""

from __future__ import annotations

from hub.cli.app import cli, main

__all__ = ["cli", "main"]
