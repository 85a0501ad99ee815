"""The ids ``hub envs pettingzoo`` lists: PettingZoo's parallel envs whose libraries import here.

PettingZoo lists every env of every family, but most families need libraries of their own
(pymunk for butterfly, multi-agent ALE for atari, mpe2 for MPE). An id is listed when the
module that defines it imports; the result is computed once per process.

Example:
    >>> "classic/rps-v2" in installed_ids()
    True
"""

from __future__ import annotations

import functools
import importlib
import warnings

from hub_plugin_pettingzoo.compat import module_of, parallel_ids

__all__ = ["installed_ids", "importable"]


def importable(env_id: str) -> bool:
    """Whether the module defining ``env_id`` imports (its libraries are installed).

    Example:
        >>> importable("classic/rps-v2"), importable("nowhere/nothing-v0")
        (True, False)
    """
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            importlib.import_module(module_of(env_id))
    except Exception:  # ImportError, or a library that fails while importing
        return False
    return True


@functools.lru_cache(maxsize=1)
def _installed() -> tuple[str, ...]:
    return tuple(env_id for env_id in parallel_ids() if importable(env_id))


def installed_ids() -> list[str]:
    """The parallel env ids whose modules import here, sorted."""
    return list(_installed())
