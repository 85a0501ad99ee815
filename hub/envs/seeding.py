"""Seeds: the range hub accepts, and seed sequences (the next seed is a deterministic function
of the previous one).

A seed is an ``int`` with ``0 <= seed < 2**32``: the range every backend takes (numpy's
``RandomState``, which dm_control seeds with, stops at ``2**32 - 1``; gymnasium refuses negative
seeds). :func:`check_seed` turns anything else into :class:`hub.errors.InvalidSeedError`.

Example:
    >>> next_seed(0) == next_seed(0)
    True
    >>> next_seed(0) != next_seed(1)
    True
    >>> check_seed(7)
    7
"""

from __future__ import annotations

import hashlib
import operator
from typing import Any

from hub.errors import InvalidSeedError

__all__ = ["SEED_LIMIT", "check_seed", "next_seed"]

#: Seeds are ints in ``[0, SEED_LIMIT)``.
SEED_LIMIT = 2**32
_MAX_SEED = 2**32 - 1


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


def next_seed(seed: int) -> int:
    """The seed that follows ``seed``: a hash of it, in ``[0, 2**32 - 1)``.

    Seeding envs one after the other (``seed = env.set_seed(seed)``) gives each env a different
    seed while a whole experiment stays reproducible from its first seed.
    """
    digest = hashlib.blake2b(int(seed).to_bytes(16, "little", signed=True), digest_size=8).digest()
    return int.from_bytes(digest, "little") % _MAX_SEED
