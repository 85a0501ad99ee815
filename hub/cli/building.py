"""Building the env a command works on, with errors a person can act on.

Example:
    >>> env = build_env("hub:Counting", {})  # doctest: +SKIP
    >>> env.batch_size  # doctest: +SKIP
    torch.Size([])
"""

from __future__ import annotations

from typing import Any

from hub.cli.errors import CliError
from hub.errors import HubError


def seed_everything(seed: int | None) -> None:
    """Seed torch's global generator (random actions come from it), when a seed is given.

    A seed outside hub's range raises :class:`hub.errors.InvalidSeedError` (shown as one line).

    Example:
        >>> seed_everything(0)
    """
    if seed is None:
        return
    import torch

    from hub.envs.seeding import check_seed

    torch.manual_seed(check_seed(seed))


def build_env(uri: str, kwargs: dict[str, Any]) -> Any:
    """``hub.make_env(uri, **kwargs)``, where bad options are a clean error, not a traceback.

    hub's own errors (unknown namespace, missing library, ...) pass through: the command line
    prints them as they are. A ``ValueError`` (a bad ``num_envs`` or batching strategy, a bad
    option value) and a ``TypeError`` about keyword arguments become a :class:`CliError`;
    ``--debug`` shows the original traceback.

    Raises:
        CliError: the options were rejected.
    """
    import hub

    try:
        return hub.make_env(uri, **kwargs)
    except HubError:
        raise
    except ValueError as err:
        raise CliError(f"cannot build {uri}: {err}") from err
    except TypeError as err:
        if not _is_bad_keyword(err):
            raise
        given = ", ".join(f"{k}={v!r}" for k, v in kwargs.items()) or "none"
        raise CliError(
            f"{uri} does not accept these options ({given}): {err}. Check the --kwarg names "
            "against the env's documentation (hub info URI shows what the env is)."
        ) from err


def _is_bad_keyword(err: TypeError) -> bool:
    text = str(err)
    return "keyword argument" in text or "positional argument" in text
