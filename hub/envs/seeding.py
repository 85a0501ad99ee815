"""Seeds: the range hub accepts, and the seed that follows a batch's seeds.

A seed is an ``int`` with ``0 <= seed < 2**32``: the range every backend takes (numpy's
``RandomState``, which dm_control seeds with, stops at ``2**32 - 1``; gymnasium refuses negative
seeds). :func:`check_seed` turns anything else into :class:`hub.errors.InvalidSeedError`.

An env of ``n`` sub-envs seeded with ``s`` seeds sub-env ``i`` with ``s + i`` (gymnasium's and
EnvPool's rule) and returns ``next_seed(s, n) == s + n``, the first seed it did not use.

Example:
    >>> next_seed(0, 4)
    4
    >>> check_seed(7)
    7
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any

from hub.errors import InvalidSeedError

__all__ = ["SEED_LIMIT", "check_seed", "next_seed", "derived_seed"]

#: Seeds are ints in ``[0, SEED_LIMIT)``.
SEED_LIMIT = 2**32


def check_seed(seed: Any) -> int | None:
    """``seed`` as an ``int`` (``None`` stays ``None``), or a clear error.

    Integer-like values (a numpy integer, a 0-d integer tensor) are accepted; bools, floats and
    ints outside ``[0, 2**32)`` are not.

    Raises:
        InvalidSeedError: ``seed`` is not an int in ``[0, 2**32)``.

    Example:
        >>> import hub
        >>> try:
        ...     check_seed(2**70)
        ... except hub.errors.InvalidSeedError as err:
        ...     print(str(err).split(";")[0])
        A seed must be an int with 0 <= seed < 2**32 (4294967296), got 1180591620717411303424
    """
    if seed is None:
        return None
    value = None
    if not isinstance(seed, bool):
        try:
            value = operator.index(seed)
        except TypeError:
            value = None
    if value is None or not 0 <= value < SEED_LIMIT:
        shown = repr(seed)
        if len(shown) > 80:
            shown = shown[:77] + "..."
        raise InvalidSeedError(
            f"A seed must be an int with 0 <= seed < 2**32 ({SEED_LIMIT}), got {shown}; "
            "to derive one from a larger number, take it modulo 2**32."
        )
    return value


def next_seed(seed: int, count: int = 1) -> int:
    """The first seed after the ``count`` seeds ``seed, seed + 1, ...`` (modulo ``2**32``).

    Example:
        >>> next_seed(2**32 - 1)
        0
    """
    return (int(seed) + int(count)) % SEED_LIMIT


def derived_seed(seed: int, *salt: int) -> int:
    """A seed in ``[0, 2**32)`` derived from ``seed`` and ``salt`` by hashing, for a sub-env
    built again (a restarted worker): it must not replay the episodes of its first life.

    Example:
        >>> derived_seed(3, 1) == derived_seed(3, 1) != derived_seed(3, 2)
        True
    """
    data = b"".join(int(v).to_bytes(16, "little", signed=True) for v in (seed, *salt))
    return int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "little") % SEED_LIMIT
