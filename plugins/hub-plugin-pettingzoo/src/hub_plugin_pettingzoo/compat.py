"""What differs between PettingZoo versions, one ``hub.implement_for`` function each.

* :func:`parallel_ids`: the parallel env ids. PettingZoo 1.27 has a registry
  (``pettingzoo.parallel_registry``); before, the ids come from the env modules' files.
* :func:`make_parallel`: building one. 1.27: ``pettingzoo.make("parallel", id)`` (importing an
  env module directly is deprecated); before: ``<module>.parallel_env(**kwargs)``.
* :func:`mpe_package`: where the MPE envs live: ``pettingzoo.mpe`` before 1.25, then the
  separate ``mpe2`` package.

Example:
    >>> [impl.range for impl in make_parallel.implementations]
    ['<1.27', '>=1.27']
"""

from __future__ import annotations

import importlib
import importlib.util
import re
import warnings
from pathlib import Path
from typing import Any

import hub

__all__ = ["parallel_ids", "make_parallel", "mpe_package", "module_ids", "module_of"]

_MODULE_FILE = re.compile(r"^(?P<name>[a-z0-9_]+)_v(?P<version>\d+)\.py$")


def module_ids(package: str, family: str) -> list[str]:
    """Ids ``family/name-vN`` of the ``name_vN.py`` modules of ``package`` that define a
    ``parallel_env``, read from the files without importing them.

    Example:
        >>> module_ids("a_package_that_is_not_installed", "x")
        []
    """
    spec = importlib.util.find_spec(package.partition(".")[0])
    if spec is None or not spec.submodule_search_locations:
        return []
    root = Path(next(iter(spec.submodule_search_locations)))
    folder = root.joinpath(*package.split(".")[1:])
    ids = []
    for path in sorted(folder.glob("*_v*.py")):
        match = _MODULE_FILE.match(path.name)
        if match and "parallel_env" in path.read_text(encoding="utf-8"):
            ids.append(f"{family}/{match['name']}-v{match['version']}")
    return ids


def module_of(env_id: str) -> str:
    """The module that defines ``env_id``'s ``parallel_env`` (MPE included).

    Example:
        >>> module_of("classic/rps-v2")
        'pettingzoo.classic.rps_v2'
    """
    family, _, rest = env_id.partition("/")
    name = rest.replace("-v", "_v")
    if family == "mpe":
        return f"{mpe_package()}.{name}"
    return f"pettingzoo.{family}.{name}"


@hub.implement_for("pettingzoo", None, "1.25")
def mpe_package() -> str:
    return "pettingzoo.mpe"


@mpe_package.register(from_version="1.25")
def _() -> str:
    return "mpe2"


@hub.implement_for("pettingzoo", None, "1.27")
def parallel_ids() -> list[str]:
    families = ("atari", "butterfly", "classic", "sisl")
    ids = [i for family in families for i in module_ids(f"pettingzoo.{family}", family)]
    return sorted(ids + module_ids(mpe_package(), "mpe"))


@parallel_ids.register(from_version="1.27")
def _() -> list[str]:
    import pettingzoo

    return sorted(set(pettingzoo.parallel_registry) | set(module_ids(mpe_package(), "mpe")))


@hub.implement_for("pettingzoo", None, "1.27")
def make_parallel(env_id: str, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        module = importlib.import_module(module_of(env_id))
    return module.parallel_env(**kwargs)


@make_parallel.register(from_version="1.27")
def _(env_id: str, **kwargs: Any) -> Any:
    import pettingzoo

    if env_id.startswith("mpe/"):  # MPE is not in PettingZoo's registry any more
        return importlib.import_module(module_of(env_id)).parallel_env(**kwargs)
    return pettingzoo.make("parallel", env_id, **kwargs)
