"""Seed sequences: the next seed is a deterministic function of the previous one.

Example:
    >>> next_seed(0) == next_seed(0)
    True
    >>> next_seed(0) != next_seed(1)
    True
"""

from __future__ import annotations

import hashlib

__all__ = ["next_seed"]

_MAX_SEED = 2**32 - 1


def next_seed(seed: int) -> int:
    """The seed that follows ``seed``: a hash of it, in ``[0, 2**32 - 1)``.

    Seeding envs one after the other (``seed = env.set_seed(seed)``) gives each env a different
    seed while a whole experiment stays reproducible from its first seed.
    """
    digest = hashlib.blake2b(int(seed).to_bytes(16, "little", signed=True), digest_size=8).digest()
    return int.from_bytes(digest, "little") % _MAX_SEED
