"""``ConformanceError``: what a conformance check raises when a plugin breaks hub's contract.

It is an ``AssertionError``, so pytest shows it as a test failure with its message (which
names the plugin or env, the check, what was expected and what to fix), not as an error of
the test's set-up.

Example:
    >>> from hub.testing.errors import ConformanceError
    >>> issubclass(ConformanceError, AssertionError)
    True
"""

from __future__ import annotations

__all__ = ["ConformanceError"]


class ConformanceError(AssertionError):
    """A plugin or one of its envs does not follow hub's plugin or env contract.

    Example:
        >>> str(ConformanceError("example:Chain-v0 [seeding]: two rollouts differ"))
        'example:Chain-v0 [seeding]: two rollouts differ'
    """
