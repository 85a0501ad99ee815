"""Installed versions of modules, found without importing them.

A module's version is its ``__version__`` when the module is already imported, else the version
of the distribution that ships it (``importlib.metadata``). Checking a version never imports the
module: asking which gym is installed must not cost the import of gym.

Versions are compared with :mod:`packaging.version` (PEP 440), so ``0.26.0rc1 < 0.26.0``.

Example:
    >>> from hub.dispatch.versions import module_version, parse_version
    >>> module_version("packaging") >= parse_version("23")
    True
    >>> module_version("a_module_that_is_not_installed") is None
    True
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from collections.abc import Callable

from packaging.version import InvalidVersion, Version

from hub.errors import HubError

__all__ = [
    "VersionRangeError",
    "clear_version_cache",
    "distribution_name",
    "is_installed",
    "module_version",
    "parse_version",
    "top_level",
    "version_and_source",
]

# Import names whose distribution is not found by the name itself (after PEP 503 normalisation,
# which already maps ``dm_control`` to ``dm-control``). Looked up before anything else.
DISTRIBUTION_OVERRIDES: dict[str, str] = {
    "dm_control": "dm-control",
    "dm_env": "dm-env",
    "ale_py": "ale-py",
    "yaml": "PyYAML",
    "cv2": "opencv-python",
    "PIL": "Pillow",
    "sklearn": "scikit-learn",
}

_LEADING_RELEASE = re.compile(r"\d+(\.\d+)*")

# top-level name -> (version, source); only metadata answers are cached (see _from_metadata)
_metadata_cache: dict[str, tuple[Version | None, str]] = {}
_installed_cache: dict[str, bool] = {}
# run whenever what dispatch depends on changes (versions, families, backend defaults): the
# dispatchers and the backend registry register one each to drop their caches
_on_change: list[Callable[[], None]] = []


class VersionRangeError(HubError, ValueError):
    """A version, a range or a module name given to ``implement_for`` is not valid.

    Example:
        >>> isinstance(VersionRangeError("x"), ValueError)
        True
    """


def top_level(module_name: str) -> str:
    """The top-level package of a dotted module name.

    Example:
        >>> top_level("gymnasium.wrappers")
        'gymnasium'
    """
    return module_name.partition(".")[0]


@functools.lru_cache(maxsize=1024)
def parse_version(text: str) -> Version:
    """Parse a PEP 440 version, raising :class:`VersionRangeError` with a clear message.

    Example:
        >>> parse_version("0.26.0rc1") < parse_version("0.26.0")
        True
    """
    try:
        return Version(str(text))
    except InvalidVersion:
        raise VersionRangeError(
            f"{text!r} is not a valid version (PEP 440): write it like '0.26', '1.0.0' or "
            "'2.0.0rc1'."
        ) from None


def _lenient(text: object) -> Version | None:
    """A version from a free-form ``__version__``: PEP 440 if it is, else its leading digits."""
    text = str(text).strip()
    try:
        return Version(text)
    except InvalidVersion:
        match = _LEADING_RELEASE.match(text.lstrip("vV"))
        return Version(match.group(0)) if match else None


def distribution_name(module_name: str) -> str | None:
    """The name of the installed distribution that ships a module, without importing it.

    Looks in :data:`DISTRIBUTION_OVERRIDES`, then for a distribution named like the module, then
    (slow, once per process) in ``importlib.metadata.packages_distributions()``.

    Example:
        >>> distribution_name("packaging")
        'packaging'
    """
    import importlib.metadata as metadata

    top = top_level(module_name)
    names = [DISTRIBUTION_OVERRIDES[top]] if top in DISTRIBUTION_OVERRIDES else []
    names.append(top)
    for name in names:
        try:
            return metadata.distribution(name).metadata["Name"] or name
        except metadata.PackageNotFoundError:
            continue
    found = _packages_distributions().get(top)
    return found[0] if found else None


@functools.lru_cache(maxsize=1)
def _packages_distributions() -> dict[str, list[str]]:
    import importlib.metadata as metadata

    return dict(metadata.packages_distributions())


def _metadata_version(distribution: str) -> str | None:
    """The version string of an installed distribution (the seam tests replace)."""
    import importlib.metadata as metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None


def _from_metadata(top: str) -> tuple[Version | None, str]:
    cache = _metadata_cache  # a clear replaces it: a late answer lands in the old one
    cached = cache.get(top)
    if cached is not None:
        return cached
    # A module that cannot be imported has no version worth knowing; skipping it also spares
    # the slow scan of every distribution that distribution_name falls back to.
    installed = is_installed(top)
    dist = distribution_name(top) if installed else None
    text = _metadata_version(dist) if dist else None
    if not installed:
        answer: tuple[Version | None, str] = (None, f"{top} is not installed")
    elif text is None:
        answer = (None, f"{top} has no __version__ and no distribution metadata")
    else:
        answer = (_lenient(text), f"metadata of distribution {dist!r}")
    cache[top] = answer
    return answer


def version_and_source(module_name: str) -> tuple[Version | None, str]:
    """The installed version of a module's top-level package, and where it was read.

    Example:
        >>> version, source = version_and_source("packaging")
        >>> source.startswith(("packaging.__version__", "metadata of distribution"))
        True
    """
    top = top_level(module_name)
    module = sys.modules.get(top)
    raw = getattr(module, "__version__", None) if module is not None else None
    if raw is not None:
        version = _lenient(raw)
        if version is not None:
            return version, f"{top}.__version__"
    return _from_metadata(top)


def module_version(module_name: str) -> Version | None:
    """The installed version of a module, or ``None`` when it cannot be found.

    ``__version__`` of the module if it is imported, else its distribution's metadata. Never
    imports the module. Dotted names give the version of their top-level package.

    Example:
        >>> module_version("packaging.version") == module_version("packaging")
        True
    """
    return version_and_source(module_name)[0]


def is_installed(module_name: str) -> bool:
    """Whether a top-level module can be imported, checked without importing it.

    Example:
        >>> is_installed("packaging"), is_installed("a_module_that_is_not_installed")
        (True, False)
    """
    top = top_level(module_name)
    if top in sys.modules:
        return sys.modules[top] is not None
    cache = _installed_cache
    cached = cache.get(top)
    if cached is None:
        try:
            cached = importlib.util.find_spec(top) is not None
        except (ImportError, ValueError):
            cached = False
        cache[top] = cached
    return cached


def clear_version_cache() -> None:
    """Forget every version and installation status found so far, and every resolved dispatch.

    Call it after installing or removing packages in a running process (and in tests that fake
    modules).

    Example:
        >>> clear_version_cache()
    """
    global _metadata_cache, _installed_cache
    _metadata_cache, _installed_cache = {}, {}
    _packages_distributions.cache_clear()
    importlib.invalidate_caches()
    _changed()


def _changed() -> None:
    """Tell every cache that depends on versions or backends to start over."""
    for callback in list(_on_change):
        callback()
